"""Avro records of a flat schema decoded and encoded a field at a time for all records at once (numpy), in
place of fastavro's record-by-record loop, which is most of a merge-on-read read's and log append's time.

A flat schema is a record whose fields are each a primitive (string, bytes, int, long, float, double,
boolean), a fixed, or one of those in a union with null (two branches); logical types date, timestamp-millis /
-micros and decimal on a fixed of at most 16 bytes included. For any other schema (nested records, arrays,
maps, enums, bytes decimals, wider unions) the callers keep fastavro (:func:`flat_fields` returns None).

The bytes are the Avro binary encoding (what fastavro reads and writes, byte for byte): ints and longs as
zigzag varints, a union as its branch index (a zigzag varint) then the branch's value, strings and bytes as a
varint length then the bytes, floats and doubles little-endian, fixed as its bytes (a decimal: big-endian two's
complement of the unscaled value). The decoder checks that each record's fields end exactly where its length
says it ends; a block that does not is reported as corrupt (HoodieIOError), never read wrong.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.errors import HoodieIOError

# Records per pass: the index arrays of a pass take several bytes per byte of strings, so a big block (up to
# hoodie.logfile.data.block.max.size) goes in chunks.
CHUNK_RECORDS = 1 << 16
_PRIMITIVES = {"string", "bytes", "int", "long", "float", "double", "boolean"}
_WIDTHS = {"float": 4, "double": 8, "boolean": 1}
_TIMESTAMP_UNITS = {"timestamp-millis": "ms", "timestamp-micros": "us"}
BINARY_MAX_BYTES = 2 ** 31 - 1  # an Arrow binary array's int32 offsets; beyond it large_binary


class FlatField(NamedTuple):
    """One field of a flat record schema: its name, Avro kind (a primitive name or "fixed"), fixed size, logical
    type (with its decimal scale), and its union shape: the value's branch index, -1 when not a union."""

    name: str
    kind: str
    size: int
    logical: str | None
    scale: int
    precision: int
    value_branch: int


@lru_cache(maxsize=64)
def flat_fields(schema_json: str) -> tuple[FlatField, ...] | None:
    """The fields of a flat record schema (its JSON text), in order; None when the schema is not flat."""
    schema = json.loads(schema_json)
    if not isinstance(schema, dict) or schema.get("type") != "record":
        return None
    out = []
    for field in schema.get("fields", []):
        avro_type, branch = field["type"], -1
        if isinstance(avro_type, list):
            if len(avro_type) != 2 or "null" not in avro_type:
                return None
            branch = 1 - avro_type.index("null")
            avro_type = avro_type[branch]
        flat = _flat_type(field["name"], avro_type, branch)
        if flat is None:
            return None
        out.append(flat)
    return tuple(out)


def _flat_type(name: str, avro_type: Any, branch: int) -> FlatField | None:
    if isinstance(avro_type, str):
        return FlatField(name, avro_type, 0, None, 0, 0, branch) if avro_type in _PRIMITIVES else None
    if not isinstance(avro_type, dict):
        return None
    kind, logical = avro_type.get("type"), avro_type.get("logicalType")
    if kind == "fixed":
        size = int(avro_type.get("size", 0))
        if logical == "decimal" and not 0 < size <= 16:
            return None
        return FlatField(name, kind, size, "decimal" if logical == "decimal" else None,
                         int(avro_type.get("scale", 0)), int(avro_type.get("precision", 0)), branch)
    if kind not in _PRIMITIVES:
        return None
    if (logical == "date" and kind == "int") or (logical in _TIMESTAMP_UNITS and kind == "long"):
        return FlatField(name, kind, 0, logical, 0, 0, branch)
    if logical == "decimal":  # bytes decimals: fastavro
        return None
    return FlatField(name, kind, 0, None, 0, 0, branch)  # other logical types read as their plain values


# -- decoding -------------------------------------------------------------------------------------------


def decode_records(content: bytes, starts: np.ndarray, ends: np.ndarray, fields: tuple[FlatField, ...],
                   wanted: pa.Schema, source: str = "avro data block") -> pa.Table:
    """The records encoded at ``content[starts[i]:ends[i]]`` as a table of ``wanted``'s fields (each a field of
    ``fields``, the records' flat schema), in ``wanted``'s order. Decoding stops after the last wanted field
    (``ends`` is then only checked for the fields read) unless every field is read."""
    buf = np.frombuffer(content, dtype=np.uint8)  # a view: no copy of the block
    if len(ends) and int(ends.max()) > len(buf):
        raise HoodieIOError(source, "corrupt Avro record: it runs past the end of its block")
    try:
        tables = [_decode_chunk(buf, starts[i:i + CHUNK_RECORDS], ends[i:i + CHUNK_RECORDS], fields, wanted, source)
                  for i in range(0, max(len(starts), 1), CHUNK_RECORDS)]
    except IndexError:  # a read past the block's end: only a corrupt last record's fields get there
        raise HoodieIOError(source, "corrupt Avro record: it runs past the end of its block") from None
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def _decode_chunk(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, fields: tuple[FlatField, ...],
                  wanted: pa.Schema, source: str) -> pa.Table:
    pos = starts.astype(np.int64, copy=True)
    last = max((i for i, f in enumerate(fields) if f.name in wanted.names), default=-1)
    columns: dict[str, pa.Array] = {}
    for field in fields[:last + 1]:
        valid = None
        if field.value_branch >= 0:
            # The branch index, 0 or 1, is a one-byte zigzag varint (0 or 2): no varint walk needed.
            branch = buf[pos]
            if np.any((branch != 0) & (branch != 2)) or np.any(pos >= ends):
                raise HoodieIOError(source, f"corrupt Avro record: bad union branch in {field.name!r}")
            pos = pos + 1
            valid = branch == 2 * field.value_branch
            if valid.all():  # no nulls: the all-records route, without index arrays
                valid = None
        array, pos = _decode_field(buf, pos, ends, field, valid, field.name in wanted.names, source)
        if array is not None:
            columns[field.name] = array
    if last == len(fields) - 1 and np.any(pos != ends):
        raise HoodieIOError(source, "corrupt Avro record: its fields end before its length says")
    return pa.table([_to_wanted(columns[f.name], f.type) for f in wanted], schema=wanted)


def _to_wanted(array: pa.Array, wanted: pa.DataType) -> pa.Array:
    return array if array.type == wanted else array.cast(wanted)


def _decode_field(buf: np.ndarray, pos: np.ndarray, ends: np.ndarray, field: FlatField, valid: np.ndarray | None,
                  keep: bool, source: str) -> tuple[pa.Array | None, np.ndarray]:
    """One field of every record (``valid``: the records whose union holds a value, None: all), and the
    positions after it (each checked against its record's end; a read past the block's end is an IndexError
    that :func:`decode_records` reports as a corrupt record)."""
    rows = np.arange(len(pos)) if valid is None else np.flatnonzero(valid)
    at, limit = (pos, ends) if valid is None else (pos[rows], ends[rows])
    mask = None if valid is None else ~valid
    kind = field.kind
    if kind in ("string", "bytes"):
        lengths, at = zigzag_varints(buf, at, source)
        if np.any(lengths < 0) or np.any(at + lengths > limit):
            raise HoodieIOError(source, f"corrupt Avro record: field {field.name!r} runs past its record")
        array = gather_binary(buf, at, lengths, rows, len(pos), mask) if keep else None
        if array is not None and kind == "string":
            array = array.cast(pa.string())
        at = at + lengths
    elif kind in ("int", "long"):
        values, at = zigzag_varints(buf, at, source)
        array = None
        if keep:
            out = values
            if valid is not None:
                out = np.zeros(len(pos), dtype=np.int64)
                out[rows] = values
            array = pa.array(out if kind == "long" else out.astype(np.int32), mask=mask)
            if field.logical == "date":
                array = array.cast(pa.date32())
            elif field.logical in _TIMESTAMP_UNITS:
                array = array.cast(pa.timestamp(_TIMESTAMP_UNITS[field.logical]))
    else:
        width = field.size if kind == "fixed" else _WIDTHS[kind]
        array = None
        if keep:
            # Rows of a sliding-window view of the block: one index per record, not one per byte.
            windows = np.lib.stride_tricks.as_strided(buf, shape=(max(len(buf) - width + 1, 0), width),
                                                      strides=(1, 1), writeable=False)
            raw = windows[at]
            if valid is not None:
                raw, values = np.zeros((len(pos), width), dtype=np.uint8), raw
                raw[rows] = values
            array = _fixed_width(raw, field, mask)
        at = at + width
    if np.any(at > limit):
        raise HoodieIOError(source, f"corrupt Avro record: field {field.name!r} runs past its record")
    if valid is None:
        return array, at
    pos = pos.copy()
    pos[rows] = at
    return array, pos


def zigzag_varints(buf: np.ndarray, pos: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray]:
    """The zigzag varints (Avro int and long) at ``pos``, and the positions after them: a byte at a time over
    the varints not yet ended, so short ones (union branches, small numbers) cost one pass."""
    byte = buf[pos]
    if not len(pos) or byte.max() < 0x80:  # one byte each (union branches, short strings' lengths)
        small = byte.astype(np.int64)
        return (small >> 1) ^ -(small & 1), pos + 1
    raw = (byte & 0x7F).astype(np.uint64)
    lengths = np.ones(len(pos), dtype=np.int64)
    going, k = byte >= 0x80, 1
    # While most varints go on (keys, dates), whole-array passes beat index subsets; then the subsets.
    while k < 10 and 2 * np.count_nonzero(going) >= len(pos):
        byte = buf[np.where(going, pos + k, pos)]
        raw |= np.where(going, byte & 0x7F, 0).astype(np.uint64) << np.uint64(7 * k)
        lengths += going
        going &= byte >= 0x80
        k += 1
    going = np.flatnonzero(going)
    for k in range(k, 10):
        if not len(going):
            break
        byte = buf[pos[going] + k]
        raw[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        lengths[going] += 1
        going = going[byte >= 0x80]
    if len(going):
        raise HoodieIOError(source, "corrupt Avro record: a varint longer than 10 bytes")
    values = (raw >> np.uint64(1)).astype(np.int64) ^ -(raw & np.uint64(1)).astype(np.int64)
    return values, pos + lengths


def gather_binary(buf: np.ndarray, at: np.ndarray, lengths: np.ndarray, rows: np.ndarray, n: int,
                  mask: np.ndarray | None) -> pa.Array:
    """Binary values of ``lengths`` bytes at ``at`` for records ``rows`` (ascending) of ``n``: the others null
    where ``mask`` (true per null record) says so, else empty."""
    if len(at) and (mask is not None or len(rows) == n) and int(at[-1] + lengths[-1]) <= len(buf) \
            and np.all(at[1:] >= at[:-1] + lengths[:-1]):
        return _taken_binary(buf, at, lengths, rows, n, mask)
    all_lengths = np.zeros(n, dtype=np.int64)
    all_lengths[rows] = lengths
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(all_lengths, out=offsets[1:])
    total = int(offsets[-1])
    index = np.repeat(at - offsets[:-1][rows], lengths) + np.arange(total, dtype=np.int64)
    data = buf[index]
    kind, offset_type = (pa.binary(), np.int32) if total < 2 ** 31 else (pa.large_binary(), np.int64)
    validity = None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))
    return pa.Array.from_buffers(kind, n, [validity, pa.py_buffer(offsets.astype(offset_type)), pa.py_buffer(data)],
                                 null_count=-1 if mask is None else int(mask.sum()))


def _taken_binary(buf: np.ndarray, at: np.ndarray, lengths: np.ndarray, rows: np.ndarray, n: int,
                  mask: np.ndarray | None) -> pa.Array:
    """:func:`gather_binary` for values that follow one another in ``buf`` (as a block's records do): a binary
    array over ``buf`` itself whose even elements are the values and odd ones the bytes between them (no
    copy), of which Arrow's take copies the even ones (one memcpy per value, no per-byte index arrays)."""
    bounds = np.empty(2 * len(at), dtype=np.int64)
    bounds[0::2] = at
    bounds[1::2] = at + lengths
    wide = len(buf) >= 2 ** 31
    over = pa.Array.from_buffers(pa.large_binary() if wide else pa.binary(), len(bounds) - 1,
                                 [None, pa.py_buffer(bounds if wide else bounds.astype(np.int32)), pa.py_buffer(buf)])
    if mask is None:
        picks = pa.array(np.arange(0, len(bounds), 2, dtype=np.int64))
    else:
        index = np.zeros(n, dtype=np.int64)
        index[rows] = np.arange(0, len(bounds), 2, dtype=np.int64)
        picks = pa.array(index, mask=mask)
    out = over.take(picks)
    if wide and int(lengths.sum()) < 2 ** 31:
        out = out.cast(pa.binary())
    return out


def _fixed_width(raw: np.ndarray, field: FlatField, mask: np.ndarray | None) -> pa.Array:
    """Fixed-width values (one row of ``raw`` bytes each) as Arrow."""
    if field.kind == "boolean":
        return pa.array(raw[:, 0] != 0, mask=mask)
    if field.kind in ("float", "double"):
        return pa.array(raw.view("<f4" if field.kind == "float" else "<f8")[:, 0], mask=mask)
    if field.logical == "decimal":
        return decimal_from_big_endian(raw, pa.decimal128(max(field.precision, 1), field.scale), mask)
    validity = None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))
    return pa.Array.from_buffers(pa.binary(field.size), len(raw), [validity, pa.py_buffer(raw.tobytes())])


def decimal_from_big_endian(raw: np.ndarray, kind: pa.DataType, mask: np.ndarray | None) -> pa.Array:
    """Decimal128 values from their unscaled big-endian two's complement bytes (one row of ``raw`` each, at
    most 16 bytes); ``mask``: the null rows."""
    size = raw.shape[1]
    wide = np.zeros((len(raw), 16), dtype=np.uint8)
    wide[raw[:, 0] >= 0x80] = 0xFF  # sign extension
    wide[:, 16 - size:] = raw
    little = np.ascontiguousarray(wide[:, ::-1])
    validity = None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))
    return pa.Array.from_buffers(kind, len(raw), [validity, pa.py_buffer(little.tobytes())],
                                 null_count=-1 if mask is None else int(mask.sum()))


# -- encoding -------------------------------------------------------------------------------------------


def encode_records(rows: pa.Table, fields: tuple[FlatField, ...]) -> bytes | None:
    """Every row of ``rows`` encoded under the flat schema ``fields`` (a column per field, by name), each
    record preceded by its length as a 4-byte big-endian int (an Avro data block's framing); the records'
    bytes are what fastavro's schemaless writer writes. None when a column does not line up with its field
    the way this encoder takes it (the caller keeps fastavro)."""
    parts = []
    for start in range(0, rows.num_rows, CHUNK_RECORDS):
        part = _encode_chunk(rows.slice(start, CHUNK_RECORDS), fields)
        if part is None:
            return None
        parts.append(part)
    return b"".join(parts)


def _encode_chunk(rows: pa.Table, fields: tuple[FlatField, ...]) -> bytes | None:
    """The records of ``rows`` with their length framing. Each field becomes, per record, a run of bytes held
    in a matrix (varints, fixed widths, union branches: a row per record, its first ``length`` bytes used) or,
    for strings and bytes, the Arrow values themselves; adjacent matrices are compacted into one binary column,
    and Arrow's element-wise join concatenates the columns record by record (a copy per value, no per-byte
    index arrays): the joined values, one after the other, are the block's records."""
    n = rows.num_rows
    columns: list[pa.Array] = []
    pending: list[tuple[np.ndarray, np.ndarray]] = []  # (used lengths, matrix) not yet compacted
    lengths = np.zeros(n, dtype=np.int64)
    for field in fields:
        if field.name not in rows.column_names:
            return None
        column = rows.column(field.name).combine_chunks()
        valid = np.asarray(column.is_valid(), dtype=bool) if column.null_count else np.ones(n, dtype=bool)
        if field.value_branch < 0 and not valid.all():
            return None  # a null in a field that takes none: fastavro's error
        piece = _field_bytes(column, field, valid)
        if piece is None:
            return None
        if field.value_branch >= 0:  # the union's branch index (0 or 1, as a one-byte zigzag varint)
            branch = np.where(valid, field.value_branch, 1 - field.value_branch).astype(np.uint8) * 2
            pending.append((np.ones(n, dtype=np.int64), branch[:, None]))
            lengths += 1
        piece_lengths, matrix, data = piece
        lengths += piece_lengths
        if data is None:
            pending.append((piece_lengths, matrix))
            continue
        pending.append((piece_lengths - data[1], matrix))  # the length varint, then the value's bytes
        columns.append(_compacted(pending))
        pending = []
        columns.append(data[0])
    framing = lengths.astype(">i4").view(np.uint8).reshape(n, 4)
    columns.insert(0, _compacted([(np.full(n, 4, dtype=np.int64), framing)]))
    if pending:
        columns.append(_compacted(pending))
    wide = int(lengths.sum()) + 4 * n > BINARY_MAX_BYTES  # every column (and the separator) as large_binary
    kind = pa.large_binary() if wide else pa.binary()
    joined = pc.binary_join_element_wise(*[c.cast(kind) for c in columns], pa.scalar(b"", kind),
                                         null_handling="replace", null_replacement=b"")
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64 if wide else np.int32, count=n + 1,
                            offset=joined.offset * (8 if wide else 4))
    return memoryview(joined.buffers()[2])[int(offsets[0]):int(offsets[-1])].tobytes()


def _compacted(pieces: list[tuple[np.ndarray, np.ndarray]]) -> pa.Array:
    """Matrices side by side (a row per record, the first ``length`` bytes of each used) as one binary value per
    record: the used bytes of its rows, in order."""
    matrix = np.concatenate([m for _, m in pieces], axis=1) if len(pieces) > 1 else pieces[0][1]
    used = np.concatenate([np.arange(m.shape[1]) < k[:, None] for k, m in pieces], axis=1)
    offsets = np.zeros(len(matrix) + 1, dtype=np.int64)
    np.cumsum(sum(k for k, _ in pieces), out=offsets[1:])
    wide = offsets[-1] > BINARY_MAX_BYTES
    kind, offset_type = (pa.large_binary(), np.int64) if wide else (pa.binary(), np.int32)
    return pa.Array.from_buffers(kind, len(matrix), [None, pa.py_buffer(offsets.astype(offset_type)),
                                                     pa.py_buffer(matrix[used])])


def _field_bytes(column: pa.Array, field: FlatField, valid: np.ndarray):
    """One field's encoding per record: (byte lengths, a matrix of fixed-width bytes or varints, and for
    strings and bytes the values as a binary array and their lengths); null records get none. None: not this
    encoder's."""
    kind, t = field.kind, column.type
    if kind in ("string", "bytes"):
        if not (pa.types.is_string(t) if kind == "string" else pa.types.is_binary(t)):
            return None
        offsets = np.frombuffer(column.buffers()[1], dtype=np.int32, count=len(column) + 1, offset=column.offset * 4)
        sizes = np.where(valid, np.diff(offsets), 0).astype(np.int64)
        matrix, heads = _varint_bytes(sizes)
        return np.where(valid, heads + sizes, 0), matrix, (column.cast(pa.binary()), sizes)
    if kind in ("int", "long"):
        ints = _integers(column, field)
        if ints is None:
            return None
        matrix, lengths = _varint_bytes(np.where(valid, ints, 0))
        return np.where(valid, lengths, 0), matrix, None
    if kind in ("float", "double", "boolean"):
        wanted = {"float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_()}[kind]
        if t != wanted:
            return None
        if kind == "boolean":
            matrix = np.asarray(column.fill_null(False), dtype=np.uint8)[:, None]
        else:
            values = np.asarray(column.fill_null(0), dtype="<f4" if kind == "float" else "<f8")
            matrix = np.ascontiguousarray(values).view(np.uint8).reshape(len(column), -1)
        return np.where(valid, matrix.shape[1], 0), matrix, None
    size = field.size
    if field.logical == "decimal":
        if not pa.types.is_decimal128(t) or t.scale != field.scale:
            return None
        little = np.frombuffer(column.buffers()[1], dtype=np.uint8, count=(column.offset + len(column)) * 16)
        big = little[column.offset * 16:].reshape(len(column), 16)[:, ::-1]
        sign = np.where(big[:, 0] >= 0x80, 0xFF, 0).astype(np.uint8)
        # The unscaled value must fit ``size`` bytes: the dropped bytes and the top kept bit are the sign.
        fits = (big[:, :16 - size] == sign[:, None]).all(axis=1) & ((big[:, 16 - size] >= 0x80) == (sign == 0xFF))
        if not fits[valid].all():
            return None
        matrix = np.ascontiguousarray(big[:, 16 - size:])
    elif t == pa.binary(size):
        matrix = np.frombuffer(column.buffers()[1], dtype=np.uint8, count=(column.offset + len(column)) * size)
        matrix = matrix[column.offset * size:].reshape(len(column), size)
    else:
        return None
    return np.where(valid, size, 0), matrix, None


def _integers(column: pa.Array, field: FlatField) -> np.ndarray | None:
    """An int or long field's values as int64 (dates as days, timestamps in the logical type's unit)."""
    t = column.type
    if field.logical == "date":
        return column.cast(pa.int32()).fill_null(0).to_numpy().astype(np.int64) if t == pa.date32() else None
    if field.logical in _TIMESTAMP_UNITS:
        if not pa.types.is_timestamp(t) or t.unit != _TIMESTAMP_UNITS[field.logical]:
            return None
        return column.cast(pa.int64()).fill_null(0).to_numpy()
    room = 32 if field.kind == "int" else 64  # the bits the Avro type holds
    if not pa.types.is_integer(t) or t.bit_width > room or (t.bit_width == room and not pa.types.is_signed_integer(t)):
        return None
    return column.fill_null(0).to_numpy().astype(np.int64)


def _varint_bytes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (int64) as zigzag varints: a row of bytes each (the first ``lengths`` of it used)."""
    raw = (values.astype(np.int64) << 1 ^ values.astype(np.int64) >> 63).view(np.uint64)
    groups = [raw]
    while np.any(groups[-1] >= 0x80):
        groups.append(groups[-1] >> np.uint64(7))
    matrix = np.stack([(g & np.uint64(0x7F)).astype(np.uint8) for g in groups], axis=1)
    lengths = np.ones(len(values), dtype=np.int64)
    for g in groups[1:]:
        lengths += g > 0
    matrix[:, :-1] |= np.where(np.arange(len(groups) - 1) < lengths[:, None] - 1, 0x80, 0).astype(np.uint8)
    return matrix, lengths
