"""Hadoop's MurmurHash: the 32-bit MurmurHash2 variant behind Hudi's footer bloom filters.

Hudi (``org.apache.hudi.common.util.hash.MurmurHash``) carries a copy of Hadoop's
``org.apache.hadoop.util.hash.MurmurHash``; both differ from the reference MurmurHash2 in one detail that
matters for byte compatibility: the 1 to 3 tail bytes are Java ``byte`` values, so they are sign-extended
before being shifted and xor-ed in. Every step below emulates Java's 32-bit ``int`` arithmetic (wrapping
multiplication, ``>>>`` as a logical shift), and results are returned as Java signed ints.

Two forms of the same function:

* :func:`hash32` hashes one byte string (pure Python; the reference).
* :class:`MurmurBatch` hashes many byte strings at once with numpy. The block mixing does not depend on the
  seed, so it is done once per key; :meth:`MurmurBatch.hash32` then only folds the pre-mixed words into
  each seed. That is what makes the bloom filter's 30 chained hashes per key cheap.

Example:
    >>> hash32(b"1", 0)
    1228156847
    >>> int(MurmurBatch([b"1", b"id:1,name:Alice"]).hash32(0)[0])
    1228156847
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

_M = 0x5BD1E995
_R = 24
_MASK32 = 0xFFFFFFFF

_M_U32 = np.uint32(_M)


def _signed32(value: int) -> int:
    """Reinterpret the low 32 bits of ``value`` as a Java ``int``."""
    value &= _MASK32
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def _signed8(value: int) -> int:
    """A byte as Java sees it (``byte`` is signed)."""
    return value - 0x100 if value & 0x80 else value


def hash32(data: bytes, seed: int) -> int:
    """Hadoop's ``MurmurHash.hash(data, data.length, seed)``.

    Args:
        data: The bytes to hash (Hudi hashes a record key's UTF-8 bytes).
        seed: A Java ``int`` (any Python int; only its low 32 bits are used).

    Returns:
        The hash as a Java signed 32-bit int.

    Example:
        >>> hash32(b"", 0)
        0
    """
    length = len(data)
    h = (seed ^ length) & _MASK32
    len4 = length >> 2
    # Blocks are little-endian words; the high byte's sign extension is shifted out of 32 bits in Java.
    for k in struct.unpack_from(f"<{len4}I", data):
        k = (k * _M) & _MASK32
        k ^= k >> _R
        k = (k * _M) & _MASK32
        h = ((h * _M) & _MASK32) ^ k
    left = length & 3
    if left:
        # Java's `(int) data[i] << n`: the signed byte is widened first, so 0x80..0xFF set the high bits.
        if left >= 3:
            h ^= (_signed8(data[length - 3]) << 16) & _MASK32
        if left >= 2:
            h ^= (_signed8(data[length - 2]) << 8) & _MASK32
        h ^= _signed8(data[length - 1]) & _MASK32
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return _signed32(h)


class MurmurBatch:
    """:func:`hash32` over many byte strings at once, vectorised with numpy.

    The seed-independent work (reading and mixing the 4-byte blocks, sign-extending the tail) is done in the
    constructor; :meth:`hash32` can then be called repeatedly with different seeds, one per key.

    Keys are kept sorted by block count, longest first, so that block ``b`` only touches the prefix of keys
    that have one; no masking is needed however mixed the key lengths are.

    Args:
        keys: The byte strings to hash.

    Example:
        >>> batch = MurmurBatch([b"a", b"abcd"])
        >>> [int(v) for v in batch.hash32(0)] == [hash32(b"a", 0), hash32(b"abcd", 0)]
        True
    """

    def __init__(self, keys: Sequence[bytes]):
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        starts = np.zeros(len(keys), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        self._build(starts, lengths, np.frombuffer(b"".join(keys), dtype=np.uint8))

    @classmethod
    def from_offsets(cls, offsets: np.ndarray, data: np.ndarray) -> MurmurBatch:
        """Keys laid out as Arrow lays out a binary array: key ``i`` is ``data[offsets[i]:offsets[i + 1]]``.

        Builds the batch without a Python object per key.
        """
        batch = cls.__new__(cls)
        offsets = offsets.astype(np.int64)
        batch._build(offsets[:-1] - offsets[0], np.diff(offsets), data[offsets[0]:offsets[-1]])
        return batch

    def _build(self, starts: np.ndarray, lengths: np.ndarray, data: np.ndarray) -> None:
        """Key ``i`` is ``data[starts[i]:starts[i] + lengths[i]]``."""
        n = len(lengths)
        nblocks = lengths >> 2
        max_blocks = int(nblocks.max()) if n else 0
        left = lengths & 3
        has_tail = left != 0
        # Longest first, and within one block count the keys with tail bytes first: the keys with a tail are
        # then one contiguous run per block count, folded in with slices instead of a gather and a scatter.
        order = np.lexsort((~has_tail, -nblocks))
        self._order = order
        self._size = n
        sorted_starts = starts[order]
        sorted_lengths = lengths[order]
        sorted_blocks = nblocks[order]
        self._lengths = sorted_lengths.astype(np.uint32)
        self._prefix = [int(np.count_nonzero(sorted_blocks > b)) for b in range(max_blocks)]

        # The little-endian word starting at every byte of the keys' data, gathered per block: key i's block b
        # is word[start_i + 4b]. Built from four aligned views (words at bytes 4j + k), no byte matrix per key.
        padded = np.zeros(len(data) + 8, dtype=np.uint8)
        padded[:len(data)] = data
        word = np.empty(len(data) + 4, dtype=np.uint32)
        for k in range(4):
            word[k::4] = np.frombuffer(padded, dtype="<u4", offset=k, count=(len(data) + 7 - k) // 4)
        # Transposed so that block b of the first c keys is one contiguous slice; blocks mixed seed-free once:
        # k *= m; k ^= k >>> r; k *= m.
        words = np.empty((max_blocks, n), dtype=np.uint32)
        for b, count in enumerate(self._prefix):
            np.take(word, sorted_starts[:count] + 4 * b, out=words[b, :count])
        words *= _M_U32
        words ^= words >> np.uint32(_R)
        words *= _M_U32
        self._words = words

        # Tail bytes as signed Java bytes, xor-ed at their shifted positions; only where length % 4 != 0.
        signed = padded.view(np.int8)
        sorted_left = sorted_lengths & 3
        ends = sorted_starts + sorted_lengths
        tail = np.zeros(n, dtype=np.int64)
        for offset, shift, needed in ((3, 16, 3), (2, 8, 2), (1, 0, 1)):
            at = np.maximum(ends - offset, 0)
            tail ^= np.where(sorted_left >= needed, signed[at].astype(np.int64) << shift, 0)
        tail &= _MASK32
        self._tail_words = tail.astype(np.uint32)
        sorted_tail = sorted_left != 0
        # [start, stop) of each run of keys with a tail (one per block count present).
        edges = np.diff(np.concatenate(([0], sorted_tail.view(np.int8), [0])))
        self._tail_runs = list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))

    def __len__(self) -> int:
        return self._size

    def hash32_chain(self, count: int) -> np.ndarray:
        """``count`` chained hashes of every key: row ``i`` is ``hash32(key, seed=row i - 1)``, row 0 seeded
        with 0 (Hadoop's ``HashFunction.hash``, which derives a bloom filter's positions this way).

        Same values as ``count`` calls of :meth:`hash32`, but the keys stay in block-count order between
        rounds and are put back in the given order once, for all rounds together.

        Returns:
            An ``int32`` array of shape ``(count, len(self))``, columns in the order the keys were given.
        """
        out = self.hash32_chain_unordered(count)
        unsorted = np.empty_like(out)
        unsorted[:, self._order] = out
        return unsorted

    def hash32_chain_unordered(self, count: int) -> np.ndarray:
        """:meth:`hash32_chain` with its columns in the batch's own order: column ``j`` is key ``order[j]``
        (:attr:`order`). For a caller to whom the key order does not matter (a bloom filter setting bits), it
        spares putting every hash back in place."""
        out = np.empty((count, self._size), dtype=np.uint32)
        scratch = np.empty(self._size, dtype=np.uint32)
        seeds = np.zeros(self._size, dtype=np.uint32)
        for i in range(count):
            # Each round hashes in place in its row of the result, seeded by the row before.
            seeds = self._hash_sorted(seeds, out[i], scratch)
        return out.view(np.int32)

    def hash32_rounds(self, count: int):
        """The rounds of :meth:`hash32_chain_unordered` one at a time: yields ``count`` ``uint32`` arrays (Java's
        signed hash read unsigned), each valid until the next is asked for (the buffers are reused). A caller
        that turns each round into something else (bit positions) does so while the round is still in cache,
        rather than streaming the whole ``(count, len(self))`` matrix through memory once per step."""
        seeds = np.zeros(self._size, dtype=np.uint32)
        spare = np.empty(self._size, dtype=np.uint32)
        scratch = np.empty(self._size, dtype=np.uint32)
        for _ in range(count):
            h = self._hash_sorted(seeds, spare, scratch)
            yield h
            seeds, spare = h, seeds

    @property
    def order(self) -> np.ndarray:
        """The given position of each key in the batch's own (block-count) order."""
        return self._order

    def _hash_sorted(self, seeds: np.ndarray, out: np.ndarray | None = None,
                     scratch: np.ndarray | None = None) -> np.ndarray:
        """The hash of every key, keys and ``seeds`` (``uint32``) both in block-count order; written to
        ``out`` when given (``scratch``: a work array of the same shape)."""
        h = np.bitwise_xor(seeds, self._lengths, out=out)
        if scratch is None:
            scratch = np.empty_like(h)
        for b, count in enumerate(self._prefix):
            block = h[:count]
            block *= _M_U32
            block ^= self._words[b, :count]
        for start, stop in self._tail_runs:
            run = h[start:stop]
            run ^= self._tail_words[start:stop]
            run *= _M_U32
        h ^= np.right_shift(h, np.uint32(13), out=scratch)
        h *= _M_U32
        h ^= np.right_shift(h, np.uint32(15), out=scratch)
        return h

    def hash32(self, seeds: int | np.ndarray) -> np.ndarray:
        """Hash every key, each with its own seed (or one seed for all).

        Args:
            seeds: A Java ``int`` for all keys, or an array of one per key, in the order the keys were given
                (any integer dtype; only the low 32 bits are used).

        Returns:
            An ``int32`` array of Java signed hashes, in the order the keys were given.
        """
        if isinstance(seeds, np.ndarray):
            h = seeds[self._order].astype(np.uint32)
        else:
            h = np.full(self._size, seeds & _MASK32, dtype=np.uint32)
        h = self._hash_sorted(h)
        out = np.empty(self._size, dtype=np.uint32)
        out[self._order] = h
        return out.view(np.int32)
