"""BUCKET index, SIMPLE engine: a record's file group follows from its key's hash (Hudi's HoodieSimpleBucketIndex).

Every partition holds at most ``hoodie.bucket.index.num.buckets`` file groups, one per bucket, and a file group's
id starts with its bucket id as 8 digits (``00000003-8355-45cc-97c6-c31daf0df330-0``). No key is looked up and
none comes to the driver: the bucket id is computed per record in the executors, and the file group of each
(partition, bucket) comes from the file names the driver lists anyway.

The bucket id is Java Hudi 0.14's (BucketIdentifier): the hash keys are extracted from the record key, hashed as
a Java ``List<String>`` (``String.hashCode`` over UTF-16 code units, 32-bit overflow), then
``(hash & Integer.MAX_VALUE) % numBuckets``. It must match bit for bit, or a Java writer and hoodpy would put a
key into different file groups of one table. :func:`bucket_id` is the reference, one key at a time;
:func:`bucket_ids` is the same arithmetic over a column in numpy (modulo 2^32 in unsigned 64-bit integers), which
:func:`bucket_id_column` runs in the Python workers on the record key column alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from hoodpy.config import HoodieConfig
from hoodpy.config.index import BUCKET, CONSISTENT_HASHING, IndexConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import HoodieIOError, InvalidConfigError
from hoodpy.file_group.file_group import BaseFile

# KeyGenUtils' placeholders of a null / empty field inside a composite record key.
_NULL_PLACEHOLDER = "__null__"
_EMPTY_PLACEHOLDER = "__empty__"
_INT_SPACE = 1 << 32
_INT_MAX = 0x7FFFFFFF
BUCKET_ID_DIGITS = 8


@dataclass(frozen=True)
class BucketSpec:
    """A write's bucket layout: how many buckets per partition and which record key fields are hashed."""

    num_buckets: int
    hash_fields: tuple[str, ...]

    @classmethod
    def of(cls, config: HoodieConfig) -> BucketSpec | None:
        """The configured layout, or None when the index is not BUCKET; a bad setting fails naming it."""
        if config.get(IndexConfig.TYPE) != BUCKET:
            return None
        engine = config.get(IndexConfig.BUCKET_ENGINE)
        if engine == CONSISTENT_HASHING:
            raise InvalidConfigError(IndexConfig.BUCKET_ENGINE.key, engine,
                                     "the CONSISTENT_HASHING bucket engine (resizable buckets) is not supported by "
                                     "hoodpy; use SIMPLE (a fixed number of buckets per partition)")
        num_buckets = config.get(IndexConfig.BUCKET_NUM_BUCKETS)
        if num_buckets <= 0:
            raise InvalidConfigError(IndexConfig.BUCKET_NUM_BUCKETS.key, num_buckets,
                                     "the bucket index needs at least one bucket per partition")
        if num_buckets >= 10 ** BUCKET_ID_DIGITS:
            raise InvalidConfigError(IndexConfig.BUCKET_NUM_BUCKETS.key, num_buckets,
                                     f"a bucket id has {BUCKET_ID_DIGITS} digits in the file id")
        record_key = tuple(config.get(TableConfig.RECORD_KEY_FIELDS))
        if not record_key:
            raise InvalidConfigError(IndexConfig.TYPE.key, "BUCKET", "the bucket index hashes record key fields, "
                                     "and a table with generated keys has none (set a record key)")
        hash_fields = tuple(config.get(IndexConfig.BUCKET_HASH_FIELD)) or record_key
        outside = [f for f in hash_fields if f not in record_key]
        if outside:
            raise InvalidConfigError(IndexConfig.BUCKET_HASH_FIELD.key, ",".join(hash_fields),
                                     f"bucket index hash field(s) {', '.join(outside)} are not record key fields "
                                     f"(record key: {', '.join(record_key)}); they must be a subset of them")
        return cls(num_buckets, hash_fields)

    @classmethod
    def for_new_table(cls, options: Mapping[str, Any], record_key_fields: Sequence[str]) -> BucketSpec | None:
        """:meth:`of` for the options of a table not created yet (SQL's TBLPROPERTIES, a dbt model's config)."""
        return cls.of(HoodieConfig.of(options, {TableConfig.RECORD_KEY_FIELDS.key: ",".join(record_key_fields)}))


# -- the reference arithmetic (Java semantics, one key at a time) ---------------------------------
def _to_int32(value: int) -> int:
    value %= _INT_SPACE
    return value - _INT_SPACE if value > _INT_MAX else value


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: h = 31*h + c over the UTF-16 code units, as a signed 32-bit int."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) % _INT_SPACE
    return _to_int32(h)


def java_list_hash(items: Iterable[str | None]) -> int:
    """``List.hashCode()``: h = 31*h + (item hash, 0 for null), starting at 1."""
    h = 1
    for item in items:
        h = (31 * h + (0 if item is None else java_string_hash(item))) % _INT_SPACE
    return _to_int32(h)


def _java_split(text: str, separator: str, limit: int = 0) -> list[str]:
    """``String.split`` for a one-character literal: limit 0 drops trailing empty strings, a positive limit caps
    the number of parts."""
    parts = text.split(separator, limit - 1) if limit > 0 else text.split(separator)
    if limit == 0:
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
        if parts == [""] and text:
            return []  # only separators: every part was a trailing empty string
    return parts


def hash_keys(record_key: str, hash_fields: Sequence[str]) -> list[str | None]:
    """The values hashed for a record key (BucketIdentifier.getHashKeys with KeyGenUtils.extractRecordKeysByFields).

    A key without ``:`` is hashed whole. Otherwise it is read as ``f1:v1,f2:v2``: split on ``,``, each part on its
    first ``:``; parts naming a hash field (or with no ``:``) are kept in record key order, ``__null__`` read as
    null and ``__empty__`` as the empty string.
    """
    if ":" not in record_key:
        return [record_key]
    out: list[str | None] = []
    for part in _java_split(record_key, ","):
        kv = _java_split(part, ":", 2)
        if len(kv) == 1:
            out.append(kv[0])
        elif kv[0] in hash_fields:
            out.append(None if kv[1] == _NULL_PLACEHOLDER else "" if kv[1] == _EMPTY_PLACEHOLDER else kv[1])
    return out


def bucket_id(record_key: str, spec: BucketSpec) -> int:
    return (java_list_hash(hash_keys(record_key, spec.hash_fields)) & _INT_MAX) % spec.num_buckets


# -- file ids ------------------------------------------------------------------------------------
def bucket_id_str(bucket: int) -> str:
    return f"{bucket:0{BUCKET_ID_DIGITS}d}"


def new_bucket_file_id(bucket: int) -> str:
    """A new file group id for ``bucket``: a uuid4 whose first 8 characters are the bucket id, then ``-0``
    (BucketIdentifier.newBucketFileIdPrefix + FSUtils.createNewFileId(prefix, 0))."""
    return f"{bucket_id_str(bucket)}{str(uuid.uuid4())[BUCKET_ID_DIGITS:]}-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a file id names (its first 8 characters as a number), or None when they are not digits."""
    head = file_id[:BUCKET_ID_DIGITS]
    return int(head) if len(head) == BUCKET_ID_DIGITS and head.isdigit() else None


def bucket_file_groups(base_files: Iterable[BaseFile], spec: BucketSpec) -> dict[tuple[str, int], str]:
    """(partition, bucket) -> file id of the latest file groups (HoodieSimpleBucketIndex's mapping).

    Fails, naming the file group, when a file id names none of the buckets (the table was written with another
    index, or with more buckets: a uuid may start with 8 digits, so the two cannot be told apart), or when two
    file groups of a partition claim one bucket.
    """
    out: dict[tuple[str, int], str] = {}
    for bf in base_files:
        bucket = bucket_of_file_id(bf.file_id)
        where = f"file group {bf.file_id} in partition {bf.partition_path!r}"
        if bucket is None or bucket >= spec.num_buckets:
            raise InvalidConfigError(IndexConfig.BUCKET_NUM_BUCKETS.key, spec.num_buckets,
                                     f"{where} belongs to none of the table's buckets 0..{spec.num_buckets - 1} "
                                     f"(its id does not start with one): the table was written with another index "
                                     f"or with more buckets, and neither can change")
        if (bf.partition_path, bucket) in out:
            raise HoodieIOError(bf.partition_path or "(table root)",
                                f"two file groups for bucket {bucket} ({out[(bf.partition_path, bucket)]} and "
                                f"{bf.file_id}) in the partition")
        out[(bf.partition_path, bucket)] = bf.file_id
    return out


# -- the same arithmetic over a whole column (numpy), and as a Spark column --------------------------
def _powers_of_31(count: int) -> np.ndarray:
    """31^k modulo 2^32 for k in [0, count)."""
    powers = np.ones(max(count, 1), dtype=np.uint64)
    for k in range(1, count):
        powers[k] = (powers[k - 1] * np.uint64(31)) % np.uint64(_INT_SPACE)
    return powers


def _unsigned_string_hashes(strings: pa.Array) -> np.ndarray:
    """``String.hashCode`` modulo 2^32 of every string (nulls hash as 0, like Java's null list elements).

    An ASCII string's UTF-16 code units are its bytes, so all of them are hashed together, one character
    position at a time; other strings take :func:`java_string_hash`.
    """
    n = len(strings)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out
    strings = strings.fill_null("")
    ascii_mask = pc.string_is_ascii(strings).to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(~ascii_mask):
        out[i] = java_string_hash(strings[int(i)].as_py()) % _INT_SPACE
    binary = strings.filter(pa.array(ascii_mask)).cast(pa.large_binary())
    m = len(binary)
    if m == 0:
        return out
    _, offsets_buf, data_buf = binary.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[binary.offset:binary.offset + m + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8)[offsets[0]:offsets[-1]] if data_buf is not None else \
        np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1] - offsets[0], np.diff(offsets)
    # Horner's rule one character position at a time over the strings still that long (longest first).
    order = np.argsort(-lengths, kind="stable")
    longer_than = np.searchsorted(-lengths[order], -np.arange(int(lengths.max(initial=0))), side="left")
    hashes = np.zeros(m, dtype=np.uint64)
    mask = np.uint64(_INT_SPACE - 1)
    for j, count in enumerate(longer_than):
        if count == m:  # every string is longer than j: no gather
            hashes = (hashes * np.uint64(31) + data[starts + j]) & mask
        else:
            active = order[:count]
            hashes[active] = (hashes[active] * np.uint64(31) + data[starts[active] + j]) & mask
    out[ascii_mask] = hashes
    return out


def _unsigned_list_hashes(record_keys: pa.Array, hash_fields: Sequence[str]) -> np.ndarray:
    """``List.hashCode`` of :func:`hash_keys` modulo 2^32, for composite record keys (all holding ``:``)."""
    n = len(record_keys)
    parts = pc.split_pattern(pc.replace_substring_regex(record_keys, ",+$", ""), ",")  # Java drops trailing ""
    flat, parent = pc.list_flatten(parts), pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    pairs = pc.extract_regex(flat, r"(?s)^(?P<k>[^:]*):(?P<v>.*)$")  # split at the first ':'; null if none
    has_pair = pc.is_valid(pairs)
    field, value = pc.struct_field(pairs, "k"), pc.struct_field(pairs, "v")
    keep = pc.or_(pc.invert(has_pair), pc.fill_null(pc.is_in(field, value_set=pa.array(list(hash_fields))), False))
    value = pc.if_else(pc.equal(value, _NULL_PLACEHOLDER), pa.scalar(None, pa.string()),
                       pc.if_else(pc.equal(value, _EMPTY_PLACEHOLDER), "", value))
    elements = pc.if_else(has_pair, value, flat)  # null and "" both hash as 0
    keep_np = keep.to_numpy(zero_copy_only=False)
    kept_parent = parent[keep_np]
    kept_hash = _unsigned_string_hashes(elements.filter(keep))
    counts = np.bincount(kept_parent, minlength=n)
    powers = _powers_of_31(int(counts.max()) + 1 if n else 1)
    first = np.cumsum(counts) - counts
    from_end = counts[kept_parent] - 1 - (np.arange(len(kept_parent)) - first[kept_parent])
    sums = np.zeros(n, dtype=np.uint64)
    np.add.at(sums, kept_parent, (kept_hash * powers[from_end]) % np.uint64(_INT_SPACE))
    return (powers[counts] + sums) % np.uint64(_INT_SPACE)


def bucket_ids(record_keys: pa.Array | pa.ChunkedArray, spec: BucketSpec) -> np.ndarray:
    """:func:`bucket_id` of every record key (int32), vectorized."""
    if isinstance(record_keys, pa.ChunkedArray):
        record_keys = record_keys.combine_chunks()
    keys = record_keys.cast(pa.string()).fill_null("")
    composite = pc.fill_null(pc.match_substring(keys, ":"), False).to_numpy(zero_copy_only=False)
    hashes = np.zeros(len(keys), dtype=np.uint64)
    simple = np.flatnonzero(~composite)
    hashes[simple] = (np.uint64(31) + _unsigned_string_hashes(keys.take(simple))) % np.uint64(_INT_SPACE)
    nested = np.flatnonzero(composite)
    if len(nested):
        hashes[nested] = _unsigned_list_hashes(keys.take(nested), spec.hash_fields)
    return ((hashes & np.uint64(_INT_MAX)) % np.uint64(spec.num_buckets)).astype(np.int32)


def bucket_id_column(record_key: Column, spec: BucketSpec) -> Column:
    """The bucket id (int) of each record key, computed in the Python workers: only the key column travels."""
    @F.pandas_udf("int")
    def ids(keys: pd.Series) -> pd.Series:
        return pd.Series(bucket_ids(pa.Array.from_pandas(keys, type=pa.string()), spec))

    return ids(record_key)
