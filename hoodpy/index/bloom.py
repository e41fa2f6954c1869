"""BLOOM index: prune candidate files by footer key ranges, then check footer bloom filters and confirm
against the file's keys (Hudi's HoodieBloomIndex with range pruning and key lookup).

With ``hoodie.bloom.index.use.metadata=true`` and a metadata table that has the ``bloom_filters`` partition,
the filters come from it (:mod:`hoodpy.metadata_table.bloom_filters`) rather than the footers, and a file whose
filter rules out every candidate key is not opened at all (Hudi's metadata-table bloom index, RFC-37). A file
the partition lacks falls back to its footer. Likewise the key ranges come from the ``column_stats`` partition's
min / max of ``_hoodie_record_key`` when the table has it (Java's loadColumnRangesFromMetaIndex), so that
pruning by ranges opens no footer either."""

from __future__ import annotations

import bisect
import logging
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hoodpy.config import HoodieConfig
from hoodpy.config.index import IndexConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.file_group.file_group import BaseFile
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION, LOCATED_DDL
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY, BloomFilter, footer_bloom_filter, footer_key_range
from hoodpy.keygen import KeyGenerator, virtual_keys
from hoodpy.keygen.stored import stored_record_keys
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.errors import MetadataTableError
from hoodpy.metadata_table import bloom_filters as mdt_bloom
from hoodpy.metadata_table import column_stats as mdt_stats
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)
_FILES_DDL = "f_partition string, f_file_id string, f_path string, f_min string, f_max string"


@lru_cache(maxsize=65536)
def _key_range(base_uri: str, rel_path: str) -> tuple[str | None, str | None]:
    # Base files never change once written, so their ranges can be cached by path.
    storage = Storage(base_uri)
    with storage.fs.open_input_file(storage.full_path(rel_path)) as f:
        meta = pq.read_metadata(f).metadata or {}
    return footer_key_range(meta)


def metadata_key_ranges(storage: Storage, base_files: list[BaseFile]) -> dict[str, tuple[str, str]]:
    """path -> (min, max) record key of those ``base_files`` the metadata table's column_stats partition
    indexes ``_hoodie_record_key`` of (Java's loadColumnRangesFromMetaIndex); empty when the table has no
    column_stats or it cannot be read. A file of virtual keys (no stored key values) is left out."""
    if not base_files or not mdt_stats.has_column_stats(load_table_properties(storage)):
        return {}
    try:
        found = mdt_stats.read_file_stats(storage, RECORD_KEY, [(bf.partition_path, bf.file_name)
                                                                for bf in base_files], Timeline.load(storage))
    except MetadataTableError as e:
        _log.warning("Not using column_stats of %s for key ranges (%s): reading parquet footers", storage.base_uri, e)
        return {}
    out = {}
    for bf in base_files:
        stats = found.get((bf.partition_path, bf.file_name))
        if stats is not None:
            lo = mdt_stats.unwrap_value(stats.get("minValue"), stats.get("valueType"), pa.string())
            hi = mdt_stats.unwrap_value(stats.get("maxValue"), stats.get("valueType"), pa.string())
            if isinstance(lo, str) and isinstance(hi, str):
                out[bf.path] = (lo, hi)
    return out


def key_ranges(storage: Storage, base_files: list[BaseFile], use_metadata: bool = False,
               ) -> list[tuple[str | None, str | None]]:
    """Per file, its (min, max) record key: from column_stats when ``use_metadata``
    (hoodie.bloom.index.use.metadata) and the table has it, else (and for a file it lacks) from the footer."""
    ranges: dict[str, tuple[str | None, str | None]] = dict(
        metadata_key_ranges(storage, base_files) if use_metadata else {})
    missing = [bf for bf in base_files if bf.path not in ranges]
    with ThreadPoolExecutor(max_workers=8) as pool:
        ranges.update(zip((bf.path for bf in missing),
                          pool.map(lambda bf: _key_range(storage.base_uri, bf.path), missing)))
    return [ranges[bf.path] for bf in base_files]


def metadata_filters(storage: Storage, base_files: list[BaseFile], use_metadata: bool,
                     ) -> dict[str, bytes]:
    """path -> serialized bloom filter of those ``base_files`` the metadata table's bloom_filters partition
    holds; empty unless ``use_metadata`` (hoodie.bloom.index.use.metadata) and the table has the partition."""
    if not use_metadata or not base_files or not mdt_bloom.has_partition(load_table_properties(storage)):
        return {}
    found = mdt_bloom.read_filters(storage, [(bf.partition_path, bf.file_name) for bf in base_files])
    return {bf.path: bytes(found[(bf.partition_path, bf.file_name)]["bloomFilter"]) for bf in base_files
            if (bf.partition_path, bf.file_name) in found}


def _shipped(spark, filters: dict[str, bytes]):
    """``filters`` as a broadcast variable where the session has a SparkContext; over Spark Connect (none) in
    an object with the same ``value``, carried in the task's closure."""
    try:
        return spark.sparkContext.broadcast(filters)
    except Exception:  # noqa: BLE001 - Spark Connect sessions have no SparkContext
        return SimpleNamespace(value=filters)


def _check_file(base_uri: str, virtual: KeyGenerator | None, shipped: Broadcast | SimpleNamespace | None):
    def check(candidates: pa.Table) -> pa.Table:
        storage = Storage(base_uri)
        filters: dict[str, bytes] = shipped.value if shipped is not None else {}
        path = candidates.column("f_path")[0].as_py()
        keys = pc.unique(candidates.column(RECORD_KEY).combine_chunks())
        if path in filters and rules_out(BloomFilter.deserialize(filters[path].decode()), keys):
            keys = keys.slice(0, 0)  # from the metadata table: the file is not opened
        if len(keys):
            with storage.fs.open_input_file(storage.full_path(path)) as f:
                pf = pq.ParquetFile(f)
                bloom = None if path in filters else footer_bloom_filter(pf.metadata.metadata)
                if bloom is not None and rules_out(bloom, keys):
                    keys = keys.slice(0, 0)
                if len(keys):
                    keys = keys.take(pc.sort_indices(keys))
                    keys = _held(keys, _stored_keys_for(pf, keys, virtual))
        n = len(keys)
        return pa.table({
            RECORD_KEY: keys.cast(pa.string()),
            LOC_PARTITION: pa.array([candidates.column("f_partition")[0].as_py()] * n, pa.string()),
            LOC_FILE_ID: pa.array([candidates.column("f_file_id")[0].as_py()] * n, pa.string()),
        })
    return check


class BloomIndex:
    def __init__(self, config: HoodieConfig, *, is_global: bool):
        self.is_global = is_global
        self.prune_by_ranges = config.get(IndexConfig.BLOOM_PRUNE_BY_RANGES)
        self.virtual_keys = virtual_keys(config)
        self.use_metadata = config.get(IndexConfig.BLOOM_USE_METADATA)

    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        if not base_files:
            return spark.createDataFrame([], LOCATED_DDL)
        ranges = key_ranges(storage, base_files, self.use_metadata) if self.prune_by_ranges else \
            [(None, None)] * len(base_files)
        files = spark.createDataFrame(
            [(bf.partition_path, bf.file_id, bf.path, lo, hi) for bf, (lo, hi) in zip(base_files, ranges)],
            _FILES_DDL,
        )
        # No distinct(): batches are usually combined already, and each file's check dedupes its keys.
        keys = records.select(RECORD_KEY, PARTITION_PATH)
        cond = F.lit(True)
        if not self.is_global:
            cond = cond & (F.col(PARTITION_PATH) == F.col("f_partition"))
        if self.prune_by_ranges:
            in_range = (F.col(RECORD_KEY) >= F.col("f_min")) & (F.col(RECORD_KEY) <= F.col("f_max"))
            cond = cond & (F.col("f_min").isNull() | in_range)
        candidates = keys.join(F.broadcast(files), cond, "inner").select(
            RECORD_KEY, "f_partition", "f_file_id", "f_path")
        # A broadcast variable: the filters reach each executor once, not with every task's function.
        filters = metadata_filters(storage, base_files, self.use_metadata)
        shipped = _shipped(spark, filters) if filters else None
        return candidates.groupBy("f_path").applyInArrow(
            _check_file(storage.base_uri, self.virtual_keys, shipped), LOCATED_DDL)


# A bloom probe hashes a key 30 times (~1.2 us); reading and matching a file's key column costs ~0.2 us per
# stored key. With more candidates than a sixth of the file's keys, the bloom filter cannot pay for itself
# (dense updates: nearly every candidate is stored) and the key column alone decides.
_BLOOM_WORTHWHILE_FRACTION = 6


def rules_out(bloom: BloomFilter, candidates: pa.Array) -> bool:
    """Whether ``bloom`` shows that its file holds none of ``candidates``. That is all a probe can gain: once one
    candidate may be in the file, its key column is read and decides for every candidate (matching a key against
    the column costs less than hashing it 30 times), so probing stops at the first candidate that passes, and a
    filter expected to pass one of them anyway (saturated: more keys than it was sized for) is not probed."""
    if bloom.false_positive_rate() * len(candidates) >= 1.0:
        return False
    return bloom.might_contain_none(candidates)


def _check_candidates(storage: Storage, bf: BaseFile, candidates: pa.Array, virtual: KeyGenerator | None,
                      metadata_filter: bytes | None = None, read: dict[int, pa.Array] | None = None) -> pa.Table:
    """The ``candidates`` (unique keys, sorted) that ``bf`` holds: bloom filter first (:func:`rules_out`), then its
    key column (of the row groups whose key range holds a candidate). ``metadata_filter``: the file's filter
    from the metadata table, always checked (probing it costs less than opening the file); when it rules out
    every candidate the file is not opened. A footer's filter is checked
    unless the candidates are dense. ``read``: keys of row groups read already (:func:`_holds_one`), not read
    again."""
    if metadata_filter is not None and rules_out(BloomFilter.deserialize(metadata_filter.decode()), candidates):
        candidates = candidates.slice(0, 0)
    if len(candidates):
        with storage.fs.open_input_file(storage.full_path(bf.path)) as f:
            pf = pq.ParquetFile(f)
            text = None if metadata_filter is not None else (pf.metadata.metadata or {}).get(
                FOOTER_BLOOM_FILTER_KEY.encode())
            if text is not None and len(candidates) * _BLOOM_WORTHWHILE_FRACTION <= pf.metadata.num_rows \
                    and rules_out(BloomFilter.deserialize(text.decode()), candidates):
                candidates = candidates.slice(0, 0)
            if len(candidates):
                candidates = _held(candidates, _stored_keys_for(pf, candidates, virtual, read=read))
    n = len(candidates)
    return pa.table({
        RECORD_KEY: candidates.cast(pa.string()),
        LOC_PARTITION: pa.array([bf.partition_path] * n, pa.string()),
        LOC_FILE_ID: pa.array([bf.file_id] * n, pa.string()),
    })


class _Sorted:
    """A sorted Arrow string array as a sequence of Python strings for :mod:`bisect` (a few probes, no copy)."""

    def __init__(self, keys: pa.Array):
        self._keys = keys

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, i: int) -> str:
        return self._keys[i].as_py()


def sorted_unique(keys: pa.Array) -> pa.Array:
    """``keys`` sorted, each once: a sort, then each key compared with the one before it (pc.unique's hash pass
    cost 2.5x the sort of a 360k-key batch, and Python strings for binary search as much again)."""
    ordered = keys.take(pc.sort_indices(keys))
    if len(ordered) < 2:
        return ordered
    differs = pc.not_equal(ordered.slice(1), ordered.slice(0, len(ordered) - 1)).fill_null(True)
    return ordered.filter(pa.concat_arrays([pa.array([True]), differs]))


def _bound(value) -> str | None:
    """A row group statistic of the key column as a ``str`` (None when it cannot be compared with keys)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _row_groups_in_range(md: pq.FileMetaData, sorted_candidates: pa.Array) -> list[int]:
    """The row groups of a file whose ``_hoodie_record_key`` statistics (min / max) hold one of
    ``sorted_candidates``; every row group whose statistics are missing. A record key is a string, so a file
    of numeric keys written in numeric order spans nearly every key in its footer range, while most of its row
    groups span narrow ones."""
    bounds = _row_group_key_bounds(md)
    if bounds is None:
        return list(range(md.num_row_groups))
    keys = _Sorted(sorted_candidates)
    return [i for i, (lo, hi) in enumerate(bounds)
            if lo is None or hi is None or bisect.bisect_right(keys, hi) > bisect.bisect_left(keys, lo)]


def _row_group_key_bounds(md: pq.FileMetaData) -> list[tuple[str | None, str | None]] | None:
    """Per row group, the (min, max) of its ``_hoodie_record_key`` statistics (None where missing or not
    comparable with keys); None for a file without row groups or without the key column."""
    rg0 = md.row_group(0) if md.num_row_groups else None
    column = next((j for j in range(rg0.num_columns) if rg0.column(j).path_in_schema == RECORD_KEY), None) \
        if rg0 is not None else None
    if column is None:
        return None
    out = []
    for i in range(md.num_row_groups):
        stats = md.row_group(i).column(column).statistics
        out.append((_bound(stats.min), _bound(stats.max)) if stats is not None and stats.has_min_max else (None, None))
    return out


def _stored_keys_for(pf: pq.ParquetFile, sorted_candidates: pa.Array, virtual: KeyGenerator | None,
                     read: dict[int, pa.Array] | None = None) -> pa.Array | pa.ChunkedArray:
    """The keys of ``pf`` that may be among ``sorted_candidates``: those of the row groups whose key range holds
    one (:func:`_row_groups_in_range`), taken from ``read`` (row group -> its keys) where it has them; a table
    with virtual keys computes them from the whole file."""
    if virtual is not None:
        return stored_record_keys(pf, virtual)
    groups = _row_groups_in_range(pf.metadata, sorted_candidates)
    if not groups:
        return pa.array([], pa.string())
    have = [read[i] for i in groups if read and i in read]
    if not have and len(groups) == pf.metadata.num_row_groups:
        return stored_record_keys(pf, None)
    rest = [i for i in groups if not read or i not in read]
    if rest:
        have += pf.read_row_groups(rest, columns=[RECORD_KEY]).column(RECORD_KEY).chunks  # joined by _held
    return pa.chunked_array(have)


def _held(candidates: pa.Array, stored: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The ``candidates`` (unique keys) among ``stored``, in candidate order. Hashing a file's millions of keys
    to probe fewer candidates cost ~60% of a driver lookup: the stored keys of a length no candidate has are
    dropped first (a length costs ~1% of a hash probe; numeric ids as strings sort out of numeric order, so a
    file of shorter or longer ids spans the batch's key range and shares few lengths with it), then the smaller
    side is hashed and the larger probes it."""
    stored = _of_lengths(stored, candidates)
    if len(candidates) >= len(stored):
        return candidates.filter(pc.is_in(candidates, value_set=stored))
    found = stored.filter(pc.is_in(stored, value_set=candidates))
    return candidates.filter(pc.is_in(candidates, value_set=found))


def _of_lengths(stored: pa.Array | pa.ChunkedArray, candidates: pa.Array) -> pa.Array:
    """The keys of ``stored`` whose byte length is that of one of ``candidates``, as one array (the row groups'
    chunks are joined after filtering, when fewer bytes are left to copy)."""
    if not len(stored) or not len(candidates):
        return pa.array([], stored.type)
    lengths = pc.unique(pc.binary_length(candidates))
    same = pc.is_in(pc.binary_length(stored), value_set=lengths)
    if (pc.sum(same).as_py() or 0) < len(stored):
        stored = stored.filter(same)
    return stored.combine_chunks() if isinstance(stored, pa.ChunkedArray) else stored


# A footer filter passing more than this share of absent keys separates too few of them to be worth probing
# (Hudi's default dynamic filter of a file of millions of keys passes nearly every key).
_SATURATED_FPR = 0.5


def _coverage(num_keys: int, spans: list[tuple[int, int]]) -> np.ndarray:
    """Per sorted batch key, how many of the files' key ranges (``spans``: [start, stop) over the keys) hold it."""
    diff = np.zeros(num_keys + 1, dtype=np.int32)
    for start, stop in spans:
        diff[start] += 1
        diff[stop] -= 1
    return np.cumsum(diff[:-1])


def _holds_one(pf: pq.ParquetFile, sorted_candidates: pa.Array, read: dict[int, pa.Array] | None = None) -> bool:
    """Whether the file holds one of ``sorted_candidates``, found in the keys of the one row group whose key range
    holds the most of them (a fraction of the key column). When it does, the file is rewritten for that update
    anyway, and keys it lacks sent to it unconfirmed are inserts riding along; when it does not (a batch of
    inserts, or of updates of other files, sorting into its range), its keys decide, and it may stay untouched.
    The row group's keys are kept in ``read`` (row group -> keys) for that check."""
    bounds = _row_group_key_bounds(pf.metadata)
    if bounds is None or not len(sorted_candidates) or any(lo is None or hi is None for lo, hi in bounds):
        return False
    in_order = _Sorted(sorted_candidates)
    best, best_span = None, (0, 0)
    for i, (lo, hi) in enumerate(bounds):
        span = (bisect.bisect_left(in_order, lo), bisect.bisect_right(in_order, hi))
        if span[1] - span[0] > best_span[1] - best_span[0]:
            best, best_span = i, span
    if best is None:
        return False
    stored = pf.read_row_group(best, columns=[RECORD_KEY]).column(RECORD_KEY).combine_chunks()
    if read is not None:
        read[best] = stored
    in_range = sorted_candidates.slice(best_span[0], best_span[1] - best_span[0])
    return len(_held(in_range, stored)) > 0


def _sole_candidates(storage: Storage, bf: BaseFile, sole: pa.Array, shared: pa.Array, virtual: KeyGenerator | None,
                     metadata_filter: bytes | None, max_file_size: int) -> pa.Table:
    """The ``sole`` candidates of ``bf`` (no other file of its partition may hold them) that its bloom filter
    passes, unconfirmed, when the keys among them the file lacks would fit in it (its records at their average
    size up to ``max_file_size``) and the file is rewritten anyway (:func:`_holds_one`): its merge task tells
    updates from inserts, writing a key the file lacks as an insert into it, and reads the file's keys anyway.
    The ``shared`` candidates (and the sole ones otherwise) are confirmed against the key column
    (:func:`_check_candidates`)."""
    read: dict[int, pa.Array] = {}  # the row group _holds_one reads: not read again to confirm
    with storage.fs.open_input_file(storage.full_path(bf.path)) as f:
        pf = pq.ParquetFile(f)
        md = pf.metadata
        bloom = BloomFilter.deserialize(metadata_filter.decode()) if metadata_filter is not None else \
            footer_bloom_filter(md.metadata)
        fpr = bloom.false_positive_rate() if bloom is not None else 1.0
        strays = fpr * len(sole)  # the keys expected to pass though the file lacks them: inserts into it
        fits = strays * bf.size / max(1, md.num_rows) <= max_file_size - bf.size
        trusted = fits and (strays < 1 or (virtual is None and _holds_one(pf, sole, read)))
    if not trusted:
        every = pa.concat_arrays([sole, shared])
        return _check_candidates(storage, bf, every.take(pc.sort_indices(every)), virtual, metadata_filter, read)
    passed = sole
    if fpr < _SATURATED_FPR:
        passed = sole.filter(pa.array(bloom.might_contain_many(sole), pa.bool_()))
    unconfirmed = pa.table({
        RECORD_KEY: passed.cast(pa.string()),
        LOC_PARTITION: pa.array([bf.partition_path] * len(passed), pa.string()),
        LOC_FILE_ID: pa.array([bf.file_id] * len(passed), pa.string()),
    })
    if not len(shared):
        return unconfirmed
    return pa.concat_tables([unconfirmed, _check_candidates(storage, bf, shared, virtual, metadata_filter, read)])


# A filter passing more than this share of absent keys would reject too few of a sample to prove an insert.
_PROVES_ABSENT_MAX_FPR = 0.999
# The most keys probed to prove one absent (spread over the batch): ~15 ms of hashing.
_PROVES_ABSENT_SAMPLE = 16384


def lacks_one(storage: Storage, bf: BaseFile, keys: pa.Array) -> bool:
    """Whether the footer bloom filter of ``bf`` shows that the file lacks one of ``keys`` (a filter has no false
    negatives: a key it rejects is surely absent). Up to _PROVES_ABSENT_SAMPLE keys are probed, spread over
    ``keys``; False when none is rejected, the file has no filter, or the filter passes nearly every key. Costs
    a footer and a sample's hashes (0.02 CPU s), where reading the file's key column to find out cost 0.26 (SF
    0.25: 713k keys), and a saturated filter still rejects a seventh of absent keys there."""
    keys = keys.filter(pc.greater(pc.binary_length(keys), 0))  # the filter takes no empty (nor null) key
    if not len(keys):
        return False
    with storage.fs.open_input_file(storage.full_path(bf.path)) as f:
        bloom = footer_bloom_filter(pq.ParquetFile(f).metadata.metadata)
    if bloom is None or bloom.false_positive_rate() > _PROVES_ABSENT_MAX_FPR:
        return False
    if len(keys) > _PROVES_ABSENT_SAMPLE:
        keys = keys.take(pa.array(np.linspace(0, len(keys) - 1, _PROVES_ABSENT_SAMPLE).astype(np.int64)))
    return not all(bloom.might_contain_many(keys))


def saturated_files_keys(storage: Storage, base_files: list[BaseFile]) -> dict[str, dict[int, pa.Array]]:
    """Per file of ``base_files`` whose footer bloom filter is saturated (passes most absent keys, so
    :func:`locate_on_driver` confirms any candidate in its key column), that column per row group, by file
    path: read before the batch's keys are known (``prefetched``), while the job collecting them runs."""
    out: dict[str, dict[int, pa.Array]] = {}
    for bf in base_files:
        with storage.fs.open_input_file(storage.full_path(bf.path)) as f:
            pf = pq.ParquetFile(f)
            bloom = footer_bloom_filter(pf.metadata.metadata)
            if bloom is None or bloom.false_positive_rate() < _SATURATED_FPR:
                continue
            out[bf.path] = {i: pf.read_row_group(i, columns=[RECORD_KEY]).column(RECORD_KEY).combine_chunks()
                            for i in range(pf.metadata.num_row_groups)}
    return out


def locate_on_driver(storage: Storage, keys: pa.Table, base_files: list[BaseFile], *, is_global: bool,
                     prune_by_ranges: bool = True, virtual: KeyGenerator | None = None,
                     use_metadata: bool = False, unconfirmed_max_file_size: int | None = None,
                     ranged_only: list[BaseFile] = (), confirmed_only: frozenset = frozenset(),
                     prefetched: dict[str, dict[int, pa.Array]] | None = None,
                     presorted: dict[str, pa.Array] | None = None) -> pa.Table:
    """:meth:`BloomIndex.locate` for a batch whose keys the driver holds (``RECORD_KEY``, ``PARTITION_PATH``).

    Same answer, no Spark job: footer key ranges pick each file's candidate keys by binary search over the
    sorted batch keys, then the file's bloom filter and key column confirm them. Files whose range holds
    no batch key are never opened beyond their footer.

    ``unconfirmed_max_file_size`` (a copy-on-write upsert, by partition): a candidate no other file of the
    partition may hold (by key range; ``ranged_only``: files of the partition not looked up here, the ones
    taking its inserts) is located in its file when the bloom filter passes it, unconfirmed, where the file's
    merge task can take the keys it lacks as inserts (:func:`_sole_candidates`). The driver reads no key column
    for them. Not for the (partition, file id) of ``confirmed_only`` (pending clustering takes no inserts).
    ``prefetched``: row groups' keys read already, per file path (:func:`saturated_files_keys`). ``presorted``:
    per partition, the batch's keys of that partition sorted, each once (:func:`sorted_unique`), when known.
    """
    empty = pa.table({RECORD_KEY: pa.array([], pa.string()), LOC_PARTITION: pa.array([], pa.string()),
                      LOC_FILE_ID: pa.array([], pa.string())})
    if not base_files or keys.num_rows == 0:
        return empty
    trusting = unconfirmed_max_file_size is not None and not is_global
    ranged = list(base_files) + (list(ranged_only) if trusting else [])
    ranges = key_ranges(storage, ranged, use_metadata) if prune_by_ranges else [(None, None)] * len(ranged)
    sorted_keys: dict[str | None, tuple[pa.Array, _Sorted]] = {
        p: (unique, _Sorted(unique)) for p, unique in (presorted or {}).items() if not is_global}

    def keys_of(partition: str | None) -> tuple[pa.Array, _Sorted]:
        if partition not in sorted_keys:
            column = keys.column(RECORD_KEY)
            if partition is not None:
                column = column.filter(pc.equal(keys.column(PARTITION_PATH), partition))
            unique = sorted_unique(column.combine_chunks())
            sorted_keys[partition] = (unique, _Sorted(unique))
        return sorted_keys[partition]

    spans = []
    for bf, (lo, hi) in zip(ranged, ranges, strict=True):
        _, in_order = keys_of(None if is_global else bf.partition_path)
        if lo is None or hi is None:
            spans.append((0, len(in_order)))
        else:
            spans.append((bisect.bisect_left(in_order, lo), bisect.bisect_right(in_order, hi)))
    coverage: dict[str, np.ndarray] = {}
    if trusting:
        by_partition: dict[str, list[tuple[int, int]]] = {}
        for bf, span in zip(ranged, spans):
            by_partition.setdefault(bf.partition_path, []).append(span)
        coverage = {p: _coverage(len(keys_of(p)[1]), s) for p, s in by_partition.items()}
    work, sole_work = [], []
    for bf, (start, stop) in zip(base_files, spans):
        if stop <= start:
            continue
        arrow_keys, _ = keys_of(None if is_global else bf.partition_path)
        candidates = arrow_keys.slice(start, stop - start)
        if trusting and (bf.partition_path, bf.file_id) not in confirmed_only:
            alone = pa.array(coverage[bf.partition_path][start:stop] == 1)
            if pc.any(alone).as_py():
                sole_work.append((bf, candidates.filter(alone), candidates.filter(pc.invert(alone))))
                continue
        work.append((bf, candidates))
    if not work and not sole_work:
        return empty
    filters = metadata_filters(storage, [item[0] for item in work + sole_work], use_metadata)
    with ThreadPoolExecutor(max_workers=min(8, len(work) + len(sole_work))) as pool:
        found = [pool.submit(_check_candidates, storage, *item, virtual, filters.get(item[0].path),
                             (prefetched or {}).get(item[0].path)) for item in work]
        found += [pool.submit(_sole_candidates, storage, *item, virtual, filters.get(item[0].path),
                              unconfirmed_max_file_size) for item in sole_work]
        return pa.concat_tables([empty, *(f.result() for f in found)])
