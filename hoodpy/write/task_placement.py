"""Which Spark task merges which file group: one task per group, largest first, placed exactly.

A merge task's cost is the size of its file group (read, merge, rewrite). Hashing groups into Spark's
shuffle partitions collides (two groups in one task, an idle core) and AQE coalesces small partitions,
so the driver, which knows every target and its size, places them itself: each target gets a bin, bins
are numbered largest first (Spark starts tasks in partition order, so the long tasks start first), and
each bin gets an integer label that Spark's hash partitioner sends to exactly that partition:
``repartition(n, label)`` computes ``pmod(murmur3(label, 42), n)``, and :func:`partition_labels` picks
labels whose hashes land on 0, 1, ..., n-1. An explicit partition count is never coalesced by AQE.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

_MASK = 0xFFFFFFFF
_SPARK_HASH_SEED = 42  # Spark's Murmur3Hash default seed, used by HashPartitioning


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def spark_hash_int(value: int, seed: int = _SPARK_HASH_SEED) -> int:
    """Spark's ``Murmur3_x86_32.hashInt``: what ``hash(int_column)`` returns, as a signed 32-bit int."""
    k1 = ((value & _MASK) * 0xCC9E2D51) & _MASK
    k1 = (_rotl32(k1, 15) * 0x1B873593) & _MASK
    h1 = (seed & _MASK) ^ k1
    h1 = (_rotl32(h1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4  # the input length in bytes
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def spark_partition_of(label: int, num_partitions: int) -> int:
    """The partition ``repartition(num_partitions, col)`` sends an int ``label`` to."""
    return spark_hash_int(label) % num_partitions  # Python's % is Spark's pmod for a positive divisor


def partition_labels(num_partitions: int) -> list[int]:
    """``labels[i]`` is an int that Spark's hash partitioning into ``num_partitions`` sends to partition i."""
    labels: list[int | None] = [None] * num_partitions
    missing = num_partitions
    candidate = 0
    while missing:  # every partition is hit after ~n ln n candidates
        p = spark_partition_of(candidate, num_partitions)
        if labels[p] is None:
            labels[p] = candidate
            missing -= 1
        candidate += 1
    return labels  # type: ignore[return-value]


def assign_bins(work: Mapping[Hashable, int], max_bins: int | None = None) -> tuple[dict[Hashable, int], int]:
    """A bin (Spark partition index) for every target, and the number of bins.

    One bin per target, largest first, up to ``max_bins``; beyond that, targets are packed largest first
    into the least loaded bin (LPT), so bins stay balanced.
    """
    order = sorted(work, key=lambda t: (-work[t], str(t)))
    if max_bins is None or len(order) <= max_bins:
        return {t: i for i, t in enumerate(order)}, len(order)
    heap = [(0, i) for i in range(max_bins)]
    bins = {}
    for t in order:
        load, i = heapq.heappop(heap)
        bins[t] = i
        heapq.heappush(heap, (load + work[t], i))
    return bins, max_bins


def place_file_groups(counts: Mapping[tuple[str, str], int], sizes: Mapping[tuple[str, str], int],
                      record_size: int, max_bins: int | None) -> tuple[int, dict[tuple[str, str], int]]:
    """The number of merge tasks and the bin label of each (partition, file id) receiving ``counts`` records:
    one task per file group, the largest (old file of ``sizes`` + incoming records) first."""
    work = {g: sizes.get(g, 0) + n * record_size for g, n in counts.items()}
    bin_of, num_bins = assign_bins(work, max_bins)
    labels = partition_labels(num_bins)
    return num_bins, {g: labels[bin_of[g]] for g in work}


def row_labels(partitions: pa.Array, file_ids: pa.Array, label_of: Mapping[tuple[str, str], int]) -> pa.Array:
    """Per row of (partition, file id), its group's bin label from ``label_of``, through an index into the
    groups (no Python loop over rows)."""
    group_labels = pa.array(list(label_of.values()), pa.int32())
    keys = pc.binary_join_element_wise(partitions, file_ids, "\x00")
    names = pa.array([f"{p}\x00{f}" for p, f in label_of], pa.string())
    return group_labels.take(pc.index_in(keys, value_set=names))
