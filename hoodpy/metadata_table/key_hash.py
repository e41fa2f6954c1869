"""Java's ``String.hashCode`` of many record keys at once, and the metadata-table file group each maps to
(HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex: ``abs(abs(hashCode) % count)``).

The record index shards every key of a table by it when the partition is built and every key of an upsert
when it is looked up, so the hash runs over whole key columns in numpy: ``hashCode = sum(c[i] * 31^(n-1-i))``
modulo 2^32, where for an ASCII key the UTF-16 code units ``c`` are its UTF-8 bytes. Keys with other
characters (rare in record keys) take the one-key-at-a-time reference, :func:`java_string_hash`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def java_string_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units, 32-bit wrap)."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _powers_of_31(count: int) -> np.ndarray:
    """31^k modulo 2^32 for k in [0, count), as uint32."""
    out = np.ones(max(count, 1), dtype=np.uint64)
    for k in range(1, count):
        out[k] = (out[k - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
    return out.astype(np.uint32)


# Keys hashed at once (24M lineitem keys at once took 12 GB of index arrays building an SF 4 record index).
HASH_CHUNK_KEYS = 1 << 20


def java_string_hashes(keys: Sequence[str] | pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``String.hashCode`` of every key (int32; no nulls)."""
    array = keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(keys, pa.string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
    n = len(array)
    if n > HASH_CHUNK_KEYS:  # the per-byte index arrays below take ~32 bytes per key byte: bound them
        return np.concatenate([java_string_hashes(array.slice(i, HASH_CHUNK_KEYS))
                               for i in range(0, n, HASH_CHUNK_KEYS)])
    out = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return out.view(np.int32)
    if array.null_count:
        raise ValueError("record keys to hash must not be null")
    ascii_mask = pc.string_is_ascii(array).to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(~ascii_mask):
        out[i] = java_string_hash(array[int(i)].as_py()) & 0xFFFFFFFF
    binary = array.cast(pa.large_binary()) if ascii_mask.all() else \
        array.filter(pa.array(ascii_mask)).cast(pa.large_binary())
    m = len(binary)
    if m:
        _, offsets_buf, data_buf = binary.buffers()
        offsets = np.frombuffer(offsets_buf, dtype=np.int64)[binary.offset:binary.offset + m + 1]
        data = (np.frombuffer(data_buf, dtype=np.uint8)[offsets[0]:offsets[-1]] if data_buf is not None
                else np.zeros(0, np.uint8)).astype(np.uint32)
        starts, lengths = offsets[:-1] - offsets[0], np.diff(offsets)
        hashes = np.zeros(m, dtype=np.uint32)
        if len(data):
            # Byte j of a key of length L weighs 31^(L-1-j); the weighted bytes of each key summed (uint32
            # arithmetic wraps modulo 2^32, as Java's int does).
            ends = np.repeat(starts + lengths, lengths)
            data *= _powers_of_31(int(lengths.max()))[ends - 1 - np.arange(len(data))]
            nonempty = lengths > 0
            hashes[nonempty] = np.add.reduceat(data, starts[nonempty], dtype=np.uint32)
        out[ascii_mask] = hashes
    return out.view(np.int32)


def shard_of(key: str, count: int) -> int:
    """The file group index of ``key`` among ``count``: Java's ``abs(abs(hashCode) % count)``, which for every
    hash (Integer.MIN_VALUE too, whose Math.abs stays negative) is the magnitude's remainder."""
    return abs(java_string_hash(key)) % count


def shards_of(keys: Sequence[str] | pa.Array | pa.ChunkedArray, count: int) -> np.ndarray:
    """:func:`shard_of` of every key (int64)."""
    return np.abs(java_string_hashes(keys).astype(np.int64)) % count
