"""Hudi's footer bloom filter (type ``DYNAMIC_V0``), byte-for-byte compatible with Java Hudi 0.14.

Every base file Hudi writes carries, in its parquet footer key-value metadata, a bloom filter of the file's
record keys (:data:`FOOTER_BLOOM_FILTER_KEY`), its type (:data:`FOOTER_BLOOM_TYPE_KEY`) and the smallest and
largest key (:data:`FOOTER_MIN_RECORD_KEY`, :data:`FOOTER_MAX_RECORD_KEY`). The bloom index reads them to
decide which files may hold an incoming key. This module is a port of the Java classes behind the default
type: ``HoodieDynamicBoundedBloomFilter`` wrapping ``InternalDynamicBloomFilter`` (Hadoop's
``DynamicBloomFilter`` with a bound), whose rows are Hadoop ``BloomFilter`` s hashed with Hadoop's
MurmurHash.

Serialized form (all integers big-endian), base64-encoded with the standard alphabet and padding::

    int32 -1 (version) | int32 nbHash | int8 hashType (1 = MURMUR) | int32 vectorSize
    int32 nr (keys per row) | int32 currentNbRecord | int32 rows
    rows x ( int32 -1 | int32 nbHash | int8 1 | int32 vectorSize | ceil(vectorSize / 8) bytes )

where bit ``i`` of a row is bit ``i & 7`` (least significant first) of byte ``i >> 3``. A key's UTF-8 bytes
map to ``nbHash`` positions by chaining the hash: ``h = murmur(key, seed=h)`` starting from ``h = 0``, each
position being ``abs(h % vectorSize)`` with Java's truncating remainder.

Keys are buffered and hashed in numpy batches, so adding keys one at a time is as fast as adding a list.

Example:
    >>> bloom = BloomFilter.create()
    >>> bloom.add_all(["id:1", "id:2"])
    >>> bloom.might_contain("id:1"), bloom.might_contain_many(["id:2", "id:3"])
    (True, [True, False])
    >>> BloomFilter.deserialize(bloom.serialize()).serialize() == bloom.serialize()
    True
"""

from __future__ import annotations

import base64
import binascii
import math
import numbers
import operator
import struct
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.config.index import IndexConfig
from hoodpy.errors import InvalidConfigError, InvalidRecordError
from hoodpy.index.murmur_hash import MurmurBatch, hash32
from hoodpy.meta_fields import FOOTER_BLOOM_FILTER_KEY as FOOTER_BLOOM_FILTER_KEY  # re-exported
from hoodpy.meta_fields import FOOTER_BLOOM_TYPE_KEY as FOOTER_BLOOM_TYPE_KEY  # re-exported
BLOOM_TYPE_DYNAMIC_V0 = "DYNAMIC_V0"
FOOTER_MIN_RECORD_KEY = "hoodie_min_record_key"
FOOTER_MAX_RECORD_KEY = "hoodie_max_record_key"


def footer_key_range(meta: Mapping[bytes, bytes]) -> tuple[str | None, str | None]:
    """The smallest and largest record key a base file's footer key-value metadata states (None where absent)."""
    lo, hi = meta.get(FOOTER_MIN_RECORD_KEY.encode()), meta.get(FOOTER_MAX_RECORD_KEY.encode())
    return (lo.decode() if lo is not None else None, hi.decode() if hi is not None else None)


def footer_bloom_filter(meta: Mapping[bytes, bytes] | None) -> BloomFilter | None:
    """The bloom filter a base file's footer key-value metadata holds (None when it has none)."""
    text = (meta or {}).get(FOOTER_BLOOM_FILTER_KEY.encode())
    return BloomFilter.deserialize(text.decode()) if text is not None else None

_VERSION = -1  # Hadoop's Filter.VERSION; negative so old non-versioned filters (nbHash first) are told apart.
_MURMUR_HASH = 1  # Hadoop's Hash.MURMUR_HASH; the only hash Hudi writes.
_INT32_MAX = 2**31 - 1
_LOG2_SQUARED = math.log(2) * math.log(2)

_FILTER_HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize
_DYNAMIC_HEADER = struct.Struct(">iii")  # nr, currentNbRecord, number of rows

_BATCH = 1 << 16  # keys hashed per numpy batch; bounds the (keys x nbHash) position matrix to ~16 MB


def bit_size(num_entries: int, fpp: float) -> int:
    """Hudi's ``BloomFilterUtils.getBitSize``: bits per row for ``num_entries`` keys at rate ``fpp``.

    The expression keeps Java's evaluation order so that the ``ceil`` lands on the same integer.

    Example:
        >>> bit_size(60000, 0.000000001)
        2587966
    """
    return math.ceil(num_entries * (-math.log(fpp) / _LOG2_SQUARED))


def num_hashes(bits: int, num_entries: int) -> int:
    """Hudi's ``BloomFilterUtils.getNumHashes``: ``ceil(ln 2 * bits / num_entries)`` (a ceiling, not a round).

    Example:
        >>> num_hashes(2587966, 60000)
        30
    """
    return math.ceil(math.log(2) * bits / num_entries)


def serialized_sizes(num_entries: int = 60000, fpp: float = 0.000000001, max_entries: int = 100000,
                     ) -> list[tuple[int | None, int]]:
    """How the footer text of ``BloomFilter.create(num_entries, fpp, max_entries)`` grows with its keys:
    (most keys at this length, None for any number; length of the base64 text) per row count, ascending.
    Computed without building a filter.

    Example:
        >>> serialized_sizes()
        [(60000, 431380), (None, 862724)]
    """
    bits = bit_size(num_entries, fpp)
    # A row is added while rows * num_entries < max_entries (see _claim_row).
    most_rows = max(1, math.ceil(max_entries / num_entries))
    out: list[tuple[int | None, int]] = []
    for rows in range(1, most_rows + 1):
        raw = _FILTER_HEADER.size + _DYNAMIC_HEADER.size + rows * (_FILTER_HEADER.size + (bits + 7) // 8)
        out.append((rows * num_entries if rows < most_rows else None, 4 * math.ceil(raw / 3)))
    return out


def _encode_key(key: str) -> bytes:
    """A record key's bytes as Java's ``String.getBytes(UTF_8)`` produces them."""
    if not isinstance(key, str):
        raise TypeError(f"bloom filter keys are str, got {type(key).__name__}")
    try:
        data = key.encode("utf-8")
    except UnicodeEncodeError:
        # Java sees UTF-16: a surrogate pair is one character, and a lone surrogate encodes as '?'.
        data = key.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        data = data.encode("utf-8", "replace")
    if not data:
        # Hadoop's HashFunction rejects zero-length keys; Hudi's key generators never produce them.
        raise InvalidRecordError("A record key added to or looked up in a bloom filter must not be empty")
    return data


def _int_setting(key: str, value: object, minimum: int) -> int:
    """A Java ``int`` setting; numpy integers are fine, floats and bools are not."""
    try:
        number = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        number = None
    if number is None or not minimum <= number <= _INT32_MAX:
        raise InvalidConfigError(key, value, f"expected an integer between {minimum} and {_INT32_MAX}")
    return number


def _corrupt(text: str | bytes, reason: str) -> InvalidConfigError:
    """The error for a serialized filter that cannot be read, quoting only a short prefix of it."""
    prefix = text[:24] if isinstance(text, str) else text[:24].decode("ascii", "replace")
    if len(text) > 24:
        prefix += "..."
    return InvalidConfigError(FOOTER_BLOOM_FILTER_KEY, prefix, f"not a {BLOOM_TYPE_DYNAMIC_V0} bloom filter: {reason}")


class BloomFilter:
    """Hudi's ``DYNAMIC_V0`` bloom filter: rows of ``nr`` keys each, growing up to ``max_entries`` keys.

    Keys go into the last row until it holds ``nr`` keys; then a new row is added while
    ``rows * nr < max_entries``. Once that bound is reached, keys are spread round-robin over the existing
    rows (exactly as Java does it, including that row 0 receives the first two keys after the switch). A key
    might be present if any row has all its bits set.

    Build one with :meth:`create` or :meth:`deserialize`; the constructor takes the raw state.

    Args:
        vector_size: Bits per row (Hadoop's ``vectorSize``).
        num_hashes: Hash positions per key (Hadoop's ``nbHash``).
        entries_per_row: Keys per row before a new one is added (Hudi's ``nr``).
        max_entries: Bound on ``rows * entries_per_row`` (Hudi's ``maxNr``).
        num_records: Keys added to the current row so far (Hudi's ``currentNbRecord``).
        rows: One boolean array of ``vector_size`` bits per row.

    Example:
        >>> bloom = BloomFilter.create(num_entries=2, fpp=0.01, max_entries=10)
        >>> bloom.add_all(["a", "b", "c"])
        >>> bloom.num_rows, bloom.num_records
        (2, 1)
    """

    def __init__(
        self,
        *,
        vector_size: int,
        num_hashes: int,
        entries_per_row: int,
        max_entries: int,
        num_records: int = 0,
        rows: list[np.ndarray] | None = None,
    ):
        self._vector_size = vector_size
        self._num_hashes = num_hashes
        self._nr = entries_per_row
        self._max_nr = max_entries
        self._current_nb_record = num_records
        self._rows = rows if rows is not None else [np.zeros(vector_size, dtype=np.bool_)]
        # Round-robin state of InternalDynamicBloomFilter; Java does not serialize it either.
        self._reached_max = False
        self._cur_matrix_index = 0
        # Keys whose row is already decided but whose bits are not set yet (hashed in batches).
        self._pending_keys: list[bytes] = []
        self._pending_rows: list[int] = []
        # Rows found with every bit set: a key routed to one sets nothing, so it is not hashed (a file of
        # millions of keys fills both rows of Hudi's default filter long before its last key). Bits are only
        # ever set, so a full row stays full.
        self._full_rows: set[int] = set()
        # Once the filter stops growing (round robin), its rows as one matrix, so that a batch of keys spread
        # over several rows sets its bits in one pass (row * vector_size + position) instead of once per row.
        self._matrix: np.ndarray | None = None

    @classmethod
    def create(cls, num_entries: int = 60000, fpp: float = 0.000000001, max_entries: int = 100000) -> BloomFilter:
        """An empty filter sized like Hudi's ``BloomFilterFactory.createBloomFilter(..., DYNAMIC_V0)``.

        Args:
            num_entries: Keys per row (``hoodie.index.bloom.num_entries``).
            fpp: Target false-positive rate of a row (``hoodie.index.bloom.fpp``).
            max_entries: Bound the filter grows to (``hoodie.bloom.index.filter.dynamic.max.entries``).

        Raises:
            InvalidConfigError: A setting is out of range or yields more than 2^31 - 1 bits per row.

        Example:
            >>> bloom = BloomFilter.create()
            >>> bloom.vector_size, bloom.num_hashes
            (2587966, 30)
        """
        num_entries = _int_setting(IndexConfig.BLOOM_NUM_ENTRIES.key, num_entries, 1)
        max_entries = _int_setting(IndexConfig.BLOOM_MAX_ENTRIES.key, max_entries, 0)
        if isinstance(fpp, bool) or not isinstance(fpp, numbers.Real) or not 0.0 < fpp < 1.0:
            raise InvalidConfigError(IndexConfig.BLOOM_FPP.key, fpp, "expected a probability strictly between 0 and 1")
        fpp = float(fpp)
        bits = bit_size(num_entries, fpp)
        if bits > _INT32_MAX:
            raise InvalidConfigError(
                IndexConfig.BLOOM_FPP.key, fpp, f"{num_entries} entries at this rate need {bits} bits, over 2^31 - 1"
            )
        return cls(
            vector_size=bits,
            num_hashes=num_hashes(bits, num_entries),
            entries_per_row=num_entries,
            max_entries=max_entries,
        )

    @classmethod
    def resume(cls, text: str | bytes, keys_added: int, num_entries: int = 60000, fpp: float = 0.000000001,
               max_entries: int = 100000) -> BloomFilter | None:
        """The filter ``create(num_entries, fpp, max_entries)`` is after adding ``keys_added`` keys, rebuilt from
        ``text``, the serialized filter of exactly those keys; None when ``text`` cannot be that (other sizing,
        another key count, not a ``DYNAMIC_V0`` filter).

        Adding more keys to the result gives, byte for byte, the filter of all the keys built from scratch:
        a rewritten file that keeps its old keys in order and appends new ones need not hash the old ones
        again. Unlike :meth:`deserialize`, the growth bound and round-robin state are restored.

        Example:
            >>> old = BloomFilter.create(2, 0.1, 4)
            >>> old.add_all(["a", "b", "c"])
            >>> resumed = BloomFilter.resume(old.serialize(), 3, 2, 0.1, 4)
            >>> resumed.add_all(["d", "e"])
            >>> scratch = BloomFilter.create(2, 0.1, 4)
            >>> scratch.add_all(["a", "b", "c", "d", "e"])
            >>> resumed.serialize() == scratch.serialize()
            True
        """
        fresh = cls.create(num_entries, fpp, max_entries)
        try:
            stored = cls.deserialize(text)
        except InvalidConfigError:
            return None
        if (stored.vector_size, stored.num_hashes, stored.entries_per_row) != (
                fresh.vector_size, fresh.num_hashes, fresh.entries_per_row):
            return None
        fresh._claim_rows(keys_added)  # the row bookkeeping of keys_added keys, without hashing them
        if (len(fresh._rows), fresh._current_nb_record) != (stored.num_rows, stored.num_records):
            return None
        fresh._rows = stored._rows
        return fresh

    # -- state -------------------------------------------------------------------------------------------

    @property
    def vector_size(self) -> int:
        """Bits per row."""
        return self._vector_size

    @property
    def num_hashes(self) -> int:
        """Hash positions per key."""
        return self._num_hashes

    @property
    def entries_per_row(self) -> int:
        """Keys per row before the filter grows (Hudi's ``nr``)."""
        return self._nr

    @property
    def max_entries(self) -> int:
        """The growth bound (0 for a deserialized filter, as in Java: it is not part of the format)."""
        return self._max_nr

    @property
    def num_rows(self) -> int:
        """Rows (standard bloom filters) in the matrix."""
        return len(self._rows)

    @property
    def num_records(self) -> int:
        """Hudi's ``currentNbRecord``: keys added since the last row was added (counts on past the bound)."""
        return self._current_nb_record

    def __repr__(self) -> str:
        return (
            f"BloomFilter(vector_size={self._vector_size}, num_hashes={self._num_hashes}, "
            f"entries_per_row={self._nr}, max_entries={self._max_nr}, rows={len(self._rows)}, "
            f"num_records={self._current_nb_record})"
        )

    # -- adding ------------------------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """Add one record key (its UTF-8 bytes).

        Raises:
            InvalidRecordError: The key is empty.
        """
        self._pending_keys.append(_encode_key(key))
        self._pending_rows.append(self._claim_row())
        if len(self._pending_keys) >= _BATCH:
            self._flush()

    def _might_contain_arrow(self, keys: pa.Array | pa.ChunkedArray) -> list[bool]:
        result: list[bool] = []
        for chunk, _ in self._arrow_batches(keys):
            result.extend(self._hits(self._positions_of_batch(chunk)).tolist())
        return result

    @staticmethod
    def _arrow_batches(keys: pa.Array | pa.ChunkedArray):
        """(MurmurBatch, start) per _BATCH keys of an Arrow string array, read straight from its buffers."""
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        if not pa.types.is_binary(keys.type) and not pa.types.is_large_binary(keys.type):
            keys = keys.cast(pa.large_binary() if pa.types.is_large_string(keys.type) else pa.binary())
        if keys.null_count or (len(keys) and pc.min(pc.binary_length(keys)).as_py() == 0):
            raise InvalidRecordError("A record key added to or looked up in a bloom filter must not be empty")
        # Arrow strings are valid UTF-8, so their bytes are what Java's getBytes(UTF_8) gives.
        wide = pa.types.is_large_binary(keys.type)
        for start in range(0, len(keys), _BATCH):
            chunk = keys.slice(start, _BATCH)
            _, offsets_buf, data_buf = chunk.buffers()
            offsets = np.frombuffer(offsets_buf, dtype=np.int64 if wide else np.int32)[
                chunk.offset:chunk.offset + len(chunk) + 1]
            data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
            yield MurmurBatch.from_offsets(offsets, data), start

    def add_all(self, keys: Iterable[str] | pa.Array | pa.ChunkedArray) -> None:
        """Add record keys in order (the order decides which row each key lands in).

        An Arrow string array is hashed straight from its buffers (no Python object per key): the form
        base file writers use.

        Raises:
            InvalidRecordError: A key is empty (for a Python iterable, the keys before it have been added;
                for an Arrow array, none has).
        """
        if isinstance(keys, (pa.Array, pa.ChunkedArray)):
            self._add_arrow(keys)
            return
        for key in keys:
            self.add(key)

    def _add_arrow(self, keys: pa.Array | pa.ChunkedArray) -> None:
        batches = self._arrow_batches(keys)  # validates before any row is claimed
        first = next(batches, None)
        if first is None:
            return
        rows = self._claim_rows(len(keys))
        self._flush()
        wanted = self._not_full(rows)
        if wanted is not None:  # some keys go to full rows: hash only the others
            if not wanted.any():
                return
            keys = (keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys).filter(pa.array(wanted))
            rows = rows[wanted]
            batches = self._arrow_batches(keys)
            first = next(batches)
        for batch, start in (first, *batches):
            self._set_batch_bits(batch, rows[start:start + len(batch)])

    def _not_full(self, rows: np.ndarray) -> np.ndarray | None:
        """Which of the keys bound for ``rows`` go to a row that is not full yet; None when all do. A row
        is looked at only while it takes keys (~0.2 ms for Hudi's default 2.6 Mbit row)."""
        if self._reached_max and len(rows) >= len(self._rows):  # round robin: every row takes some
            targets = list(range(len(self._rows)))
        elif rows[0] == rows[-1] and (rows == rows[0]).all():
            targets = [int(rows[0])]
        else:
            targets = np.unique(rows).tolist()
        for row in targets:
            if row not in self._full_rows and self._rows[row].all():
                self._full_rows.add(int(row))
        full = [row for row in targets if row in self._full_rows]
        if not full:
            return None
        return ~np.isin(rows, full)

    def _claim_rows(self, n: int) -> np.ndarray:
        """:meth:`_claim_row` for ``n`` keys at once: whole runs of keys share a row until it fills."""
        out = np.empty(n, dtype=np.int64)
        done = 0
        while done < n:
            if self._reached_max:
                k = n - done
                out[done:] = (self._cur_matrix_index + np.arange(k)) % len(self._rows)
                self._cur_matrix_index += k
                self._current_nb_record += k
                done = n
            elif self._current_nb_record < self._nr:
                k = min(n - done, self._nr - self._current_nb_record)
                out[done:done + k] = len(self._rows) - 1
                self._current_nb_record += k
                done += k
            else:  # the active row is full: _claim_row opens a row or switches to round robin
                out[done] = self._claim_row()
                done += 1
        return out

    def _claim_row(self) -> int:
        """The row the next key goes to; mirrors ``InternalDynamicBloomFilter.getActiveStandardBF`` + ``add``."""
        if self._reached_max:
            row = self._cur_matrix_index % len(self._rows)
            self._cur_matrix_index += 1
        elif self._current_nb_record >= self._nr and len(self._rows) * self._nr < self._max_nr:
            self._rows.append(np.zeros(self._vector_size, dtype=np.bool_))
            self._matrix = None
            self._current_nb_record = 0
            row = len(self._rows) - 1
        elif self._current_nb_record >= self._nr:
            # Java returns row 0 here without advancing the round-robin index: row 0 gets the next key too.
            self._reached_max = True
            row = 0
        else:
            row = len(self._rows) - 1
        self._current_nb_record += 1
        return row

    def _flush(self) -> None:
        """Set the bits of the buffered keys."""
        if not self._pending_keys:
            return
        keys, rows = self._pending_keys, np.asarray(self._pending_rows, dtype=np.int64)
        self._pending_keys, self._pending_rows = [], []
        self._set_batch_bits(MurmurBatch(keys), rows)

    def _set_batch_bits(self, batch: MurmurBatch, rows: np.ndarray) -> None:
        """Set the bits of ``batch``'s keys, key ``j`` (in the given order) in row ``rows[j]``. Which bits a key
        sets does not depend on the other keys: hashed in the batch's own order, with the keys' rows put in that
        order instead of every hash put back in the keys' order."""
        rows = rows[batch.order]
        first = rows[0]
        one_row = bool((rows == first).all())  # every key to one row: always so until a file's filter is full
        if not one_row and not self._reached_max:  # keys on both sides of a new row: rare, row by row
            self._set_bits(self._bit_positions(batch.hash32_chain_unordered(self._num_hashes)), rows)
            return
        # Each round's positions made while its hashes are in cache, straight into the intp index numpy needs
        # (uint32 indices are converted element by element inside the assignment, 2.5x slower).
        n = len(batch)
        positions = np.empty((self._num_hashes, n), dtype=np.intp)
        work = np.empty(n, dtype=np.int32)
        quotient = np.empty(n, dtype=np.uint32)
        size = np.uint32(self._vector_size)
        offsets = None if one_row else (rows * self._vector_size).astype(np.intp)
        for i, h in enumerate(batch.hash32_rounds(self._num_hashes)):
            unsigned = self._bit_positions_into(h.view(np.int32), work, quotient, size)
            out = positions[i]
            out[:] = unsigned
            if offsets is not None:
                out += offsets
        if one_row:
            self._rows[first][positions.reshape(-1)] = True
        else:  # round robin over rows that no longer change in number: one pass over the rows as one matrix
            self._row_matrix().reshape(-1)[positions.reshape(-1)] = True

    @staticmethod
    def _bit_positions_into(hashed: np.ndarray, work: np.ndarray, quotient: np.ndarray,
                            size: np.uint32) -> np.ndarray:
        """:meth:`_bit_positions` of ``hashed`` (``int32``) in ``work`` (``int32``, ``hashed`` itself to compute in
        place; returned viewed as ``uint32``), ``quotient`` a ``uint32`` work array of the same shape."""
        np.abs(hashed, out=work)
        unsigned = work.view(np.uint32)
        # u - (u // d) * d: numpy divides by a scalar with SIMD (libdivide), its remainder divides element by
        # element, ~6x slower on Hudi's (30, 65536) batches.
        np.floor_divide(unsigned, size, out=quotient)
        quotient *= size
        return np.subtract(unsigned, quotient, out=unsigned)

    def _set_bits(self, positions: np.ndarray, rows: np.ndarray) -> None:
        """Set bit ``positions[:, j]`` of row ``rows[j]`` for every key ``j``."""
        first = rows[0]
        if (rows == first).all():  # every key went to one row: always so until a file's filter is full
            # numpy indexes with intp: uint32 indices are converted element by element inside the assignment,
            # 2.5x slower than converting them first. One flat index: ~10% faster than a 2-D one.
            self._rows[first][positions.reshape(-1).astype(np.intp)] = True
            return
        if self._reached_max:  # round robin over rows that no longer change in number: one pass
            flat = np.add(positions, (rows * self._vector_size).astype(np.intp), dtype=np.intp)
            self._row_matrix().reshape(-1)[flat] = True
            return
        positions = positions.astype(np.intp)
        for row in np.unique(rows):
            self._rows[row][positions[:, rows == row]] = True

    def _row_matrix(self) -> np.ndarray:
        """The rows as one ``(rows, vector_size)`` matrix whose rows are the arrays in ``self._rows``; made
        (the rows copied in) when the rows are not that already."""
        m = self._matrix
        if m is None or m.shape[0] != len(self._rows) or any(row.base is not m for row in self._rows):
            m = np.stack(self._rows)
            self._rows = list(m)
            self._matrix = m
        return m

    # -- hashing -----------------------------------------------------------------------------------------

    def _positions(self, keys: list[bytes]) -> np.ndarray:
        """Bit positions of many keys: a ``uint32`` array of shape ``(num_hashes, len(keys))``."""
        return self._positions_of_batch(MurmurBatch(keys))

    def _positions_of_batch(self, batch: MurmurBatch) -> np.ndarray:
        return self._bit_positions(batch.hash32_chain(self._num_hashes))

    def _bit_positions(self, hashed: np.ndarray) -> np.ndarray:
        """Bit positions of ``int32`` hashes, computed in ``hashed``'s memory."""
        # Java's Math.abs(h % vectorSize) with a truncating %, which equals abs(h) % vectorSize. abs in int32
        # wraps -2^31 to itself, which read as uint32 is 2^31, the true absolute value; uint32 division is
        # several times faster than int64.
        return self._bit_positions_into(hashed, hashed, np.empty(hashed.shape, dtype=np.uint32),
                                        np.uint32(self._vector_size))

    def _hits(self, positions: np.ndarray) -> np.ndarray:
        """Per key (column of ``positions``): whether some row has all its bits set."""
        hit = np.zeros(positions.shape[1], dtype=np.bool_)
        for row in self._rows:
            hit |= row[positions].all(axis=0)
        return hit

    def _positions_of(self, data: bytes) -> list[int]:
        """Bit positions of one key (pure Python; cheaper than numpy for a single key)."""
        positions, h = [], 0
        for _ in range(self._num_hashes):
            h = hash32(data, h)
            positions.append(abs(h) % self._vector_size)  # = Java's Math.abs(h % vectorSize)
        return positions

    # -- membership --------------------------------------------------------------------------------------

    def might_contain(self, key: str) -> bool:
        """False if ``key`` was certainly never added; True if it may have been.

        Raises:
            InvalidRecordError: The key is empty.
        """
        positions = self._positions_of(_encode_key(key))
        self._flush()
        return any(all(row[p] for p in positions) for row in self._rows)

    def might_contain_many(self, keys: Iterable[str]) -> list[bool]:
        """:meth:`might_contain` for many keys at once (vectorised; use it for more than a handful).

        Raises:
            InvalidRecordError: A key is empty.
        """
        self._flush()
        if isinstance(keys, (pa.Array, pa.ChunkedArray)):
            return self._might_contain_arrow(keys)
        encoded = [_encode_key(key) for key in keys]
        result: list[bool] = []
        for start in range(0, len(encoded), _BATCH):
            result.extend(self._hits(self._positions(encoded[start : start + _BATCH])).tolist())
        return result

    def false_positive_rate(self) -> float:
        """The chance that a key never added passes :meth:`might_contain`, from the bits each row has set: a row
        with a fraction ``f`` of its bits set passes a key with probability ``f ** num_hashes``, and a key passes
        the filter if any row passes it. Near 1 for a filter holding far more keys than it was sized for (Hudi's
        default filter of a file of millions of keys: two rows of 60,000 keys' bits, round-robin filled)."""
        self._flush()
        miss = 1.0
        for row in self._rows:
            miss *= 1.0 - (np.count_nonzero(row) / self._vector_size) ** self._num_hashes
        return 1.0 - miss

    def might_contain_none(self, keys: pa.Array | pa.ChunkedArray, first_chunk: int = 1024) -> bool:
        """Whether no key of the Arrow string array ``keys`` might have been added: probed in chunks growing from
        ``first_chunk`` keys, stopping at the first chunk where one may have been (the keys after it are never
        hashed).

        Raises:
            InvalidRecordError: A key is null or empty.
        """
        self._flush()
        start, size = 0, max(1, first_chunk)
        while start < len(keys):
            chunk = keys.slice(start, size)
            for batch, _ in self._arrow_batches(chunk):
                if self._hits(self._positions_of_batch(batch)).any():
                    return False
            start, size = start + size, min(size * 4, _BATCH)
        return True

    # -- serialization -----------------------------------------------------------------------------------

    def serialize(self) -> str:
        """The base64 text Hudi stores under :data:`FOOTER_BLOOM_FILTER_KEY`.

        Example:
            >>> BloomFilter.create(10, 0.1).serialize()[:12]
            '/////wAAAAQB'
        """
        self._flush()
        row_header = _FILTER_HEADER.pack(_VERSION, self._num_hashes, _MURMUR_HASH, self._vector_size)
        parts = [row_header, _DYNAMIC_HEADER.pack(self._nr, self._current_nb_record, len(self._rows))]
        for row in self._rows:
            parts.append(row_header)
            # Hadoop's BIT_VALUES order: bit i is mask 1 << (i & 7) of byte i >> 3, i.e. little bit order.
            parts.append(np.packbits(row, bitorder="little").tobytes())
        return base64.b64encode(b"".join(parts)).decode("ascii")

    @classmethod
    def deserialize(cls, text: str | bytes) -> BloomFilter:
        """Read a filter from the base64 text of a parquet footer (``str``, or the ``bytes`` pyarrow returns).

        Like Java's ``readFields``, this restores the bits, ``nr`` and ``currentNbRecord`` but not the growth
        bound or the round-robin state, which the format does not hold: adding keys to a deserialized filter
        behaves as in Java (``max_entries`` is 0, so a full last row switches to round-robin at once).

        Raises:
            InvalidConfigError: The text is not base64, or not a ``DYNAMIC_V0`` filter written with MurmurHash
                (truncated, trailing bytes, unknown version or hash type, inconsistent rows).

        Example:
            >>> BloomFilter.deserialize(BloomFilter.create(10, 0.1).serialize()).vector_size
            48
        """
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"expected the footer text as str or bytes, got {type(text).__name__}")
        try:
            raw = text.encode("ascii") if isinstance(text, str) else text
            # Java's Base64 decoder accepts missing padding; Python's insists on it.
            data = base64.b64decode(raw + b"=" * (-len(raw) % 4), validate=True)
        except (UnicodeEncodeError, binascii.Error) as exc:
            raise _corrupt(text, f"not base64 ({exc})") from None

        outer_size = _FILTER_HEADER.size + _DYNAMIC_HEADER.size
        if len(data) < outer_size:
            raise _corrupt(text, f"{len(data)} bytes is shorter than the {outer_size}-byte header")
        version, nb_hash, hash_type, vector_size = _FILTER_HEADER.unpack_from(data, 0)
        nr, current_nb_record, num_rows = _DYNAMIC_HEADER.unpack_from(data, _FILTER_HEADER.size)
        if version != _VERSION:
            raise _corrupt(text, f"unsupported filter version {version} (expected {_VERSION})")
        if hash_type != _MURMUR_HASH:
            raise _corrupt(text, f"hash type {hash_type} is not MurmurHash ({_MURMUR_HASH})")
        if vector_size <= 0 or nb_hash <= 0:
            raise _corrupt(text, f"vector size {vector_size} and hash count {nb_hash} must be positive")
        if num_rows <= 0:
            raise _corrupt(text, f"{num_rows} rows")
        row_bytes = (vector_size + 7) // 8
        expected = outer_size + num_rows * (_FILTER_HEADER.size + row_bytes)
        if len(data) != expected:
            raise _corrupt(
                text, f"{len(data)} bytes where {num_rows} rows of {vector_size} bits take {expected}"
            )

        expected_row_header = (_VERSION, nb_hash, _MURMUR_HASH, vector_size)
        rows: list[np.ndarray] = []
        offset = outer_size
        bits = np.frombuffer(data, dtype=np.uint8)
        for index in range(num_rows):
            row_header = _FILTER_HEADER.unpack_from(data, offset)
            if row_header != expected_row_header:
                raise _corrupt(text, f"row {index} header {row_header} differs from {expected_row_header}")
            offset += _FILTER_HEADER.size
            row = np.unpackbits(bits[offset : offset + row_bytes], count=vector_size, bitorder="little")
            rows.append(row.view(np.bool_))
            offset += row_bytes
        return cls(
            vector_size=vector_size,
            num_hashes=nb_hash,
            entries_per_row=nr,
            max_entries=0,
            num_records=current_nb_record,
            rows=rows,
        )
