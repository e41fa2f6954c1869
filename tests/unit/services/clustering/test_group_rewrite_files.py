"""rewrite_group (one task rewriting a clustering group) without Spark: the files hold the rows of one sort of
the whole group cut at the boundaries, row for row, with Hudi's footer, whatever the number of threads."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.file_group.naming import parse_base_file_name
from hoodpy.index.bloom_filter import FOOTER_MAX_RECORD_KEY, FOOTER_MIN_RECORD_KEY, BloomFilter
from hoodpy.meta_fields import FILE_NAME, FOOTER_BLOOM_FILTER_KEY, META_COLUMNS, RECORD_KEY
from hoodpy.services.clustering import layout
from hoodpy.services.clustering.group_rewrite import GroupRewrite, rewrite_group
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions

INSTANT = "20260101000000000"


def _inputs(storage: Storage, files: int, rows: int) -> tuple[list[str], pa.Schema]:
    """Base files of a group: meta columns and (x, day, payload), few distinct x and day values (ties)."""
    rng = np.random.default_rng(11)
    schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS]
                       + [pa.field("x", pa.int64()), pa.field("day", pa.date32()), pa.field("payload", pa.string())])
    paths = []
    for f in range(files):
        keys = [f"id:{f * rows + i:06d}" for i in rng.permutation(rows)]
        table = pa.table({
            "_hoodie_commit_time": ["20250101000000000"] * rows,
            "_hoodie_commit_seqno": [f"20250101000000000_{f}_{i}" for i in range(rows)],
            RECORD_KEY: keys, "_hoodie_partition_path": [""] * rows, FILE_NAME: [f"old-{f}.parquet"] * rows,
            "x": pa.array(rng.integers(0, 40, rows)), "day": pa.array(rng.integers(0, 30, rows)).cast(pa.int32())
            .cast(pa.date32()), "payload": [f"p{v}" for v in rng.integers(0, 1000, rows)]}, schema=schema)
        rel = f"in-{f}_0-1-1_20250101000000000.parquet"
        pq.write_table(table, storage.full_path(rel))
        paths.append(rel)
    return paths, schema


def _work(storage: Storage, paths: list[str], outputs: int, strategy: str) -> GroupRewrite:
    rows = pa.concat_tables(pq.read_table(storage.full_path(p)) for p in paths)
    sample = rows.take(pa.array(np.random.default_rng(3).choice(rows.num_rows, 300, replace=False)))
    bounds = tuple(layout.column_boundaries(layout.direct_keys(sample.column(c)), 64) for c in ("x", "day"))
    spec = layout.LayoutSpec(strategy, ("x", "day"), layout.SAMPLE, bounds, RECORD_KEY)
    cuts = layout.range_boundaries(layout.sort_keys(sample, spec), outputs, snap=0.1)
    ids = tuple(f"0000000{k:x}-aaaa-bbbb-cccc-dddddddddddd-0" for k in range(outputs))
    return GroupRewrite("", tuple(paths), ids, spec, cuts)


@pytest.mark.parametrize("strategy, threads", [(layout.ZORDER, 1), (layout.ZORDER, 3), (layout.HILBERT, 2),
                                               (layout.LINEAR, 2)])
def test_rewrite_group_writes_one_sort_of_the_group_cut_at_the_boundaries(tmp_path, strategy, threads):
    storage = Storage(str(tmp_path))
    paths, schema = _inputs(storage, files=3, rows=2000)
    work = _work(storage, paths, 6, strategy)
    stats = rewrite_group(storage, work, schema, INSTANT, BaseFileOptions(), threads=threads)

    # Expected: the group's rows in input order, sorted once with the boundaries (layout's reference sort).
    rows = pa.concat_tables(pq.read_table(storage.full_path(p)) for p in paths)
    keys = layout.sort_keys(rows, work.spec)
    order, ranges = layout._sorted_ranges(keys, work.boundaries.cast(keys.schema))
    expected = {k: rows.take(pa.array(order[ranges == k])).drop_columns([FILE_NAME])
                for k in range(len(work.file_ids)) if (ranges == k).any()}
    assert [s["file_id"] for s in stats] == [work.file_ids[k] for k in sorted(expected)]
    assert len(expected) >= 5 and sum(s["num_writes"] for s in stats) == 6000
    for k, s in zip(sorted(expected), stats, strict=True):
        path = storage.full_path(s["path"])
        written = pq.read_table(path)
        name = s["path"].rsplit("/", 1)[-1]
        parsed = parse_base_file_name(name)
        assert parsed.file_id == work.file_ids[k] and parsed.instant_time == INSTANT
        assert set(written.column(FILE_NAME).to_pylist()) == {name}
        assert written.drop_columns([FILE_NAME]).equals(expected[k]), k  # same rows, same order
        assert s["num_writes"] == s["num_inserts"] == written.num_rows and s["prev_commit"] == "null"
        footer = pq.read_metadata(path).metadata
        keys_k = written.column(RECORD_KEY).to_pylist()
        assert footer[FOOTER_MIN_RECORD_KEY.encode()].decode() == min(keys_k)
        assert footer[FOOTER_MAX_RECORD_KEY.encode()].decode() == max(keys_k)
        bloom = BloomFilter.deserialize(footer[FOOTER_BLOOM_FILTER_KEY.encode()])
        assert all(bloom.might_contain_many(keys_k))


def test_rewrite_group_skips_empty_ranges(tmp_path):
    storage = Storage(str(tmp_path))
    paths, schema = _inputs(storage, files=1, rows=500)
    work = _work(storage, paths, 3, layout.ZORDER)
    # Two equal boundaries: the range between them holds no row, and gets no file.
    twice = pa.concat_tables([work.boundaries.slice(0, 1), work.boundaries.slice(0, 1)])
    work = GroupRewrite("", work.base_files, work.file_ids, work.spec, twice)
    stats = rewrite_group(storage, work, schema, INSTANT, BaseFileOptions(), threads=2)
    assert [s["file_id"] for s in stats] == [work.file_ids[0], work.file_ids[2]]
    assert sum(s["num_writes"] for s in stats) == 500


def test_a_group_without_boundaries_is_laid_out_from_a_seeded_sample_of_its_rows(tmp_path):
    """The task draws ``sample_rows`` rows (seed SAMPLE_SEED, no replacement) and places the SAMPLE curve's
    column boundaries and the output cuts from them as the driver does from Spark's sample; the files are then
    those of rewriting with that spec and those boundaries given."""
    from hoodpy.services.clustering.group_rewrite import SAMPLE_SEED, sampled_layout

    storage = Storage(str(tmp_path))
    paths, schema = _inputs(storage, files=2, rows=1500)
    given = _work(storage, paths, 5, layout.ZORDER)
    bare = layout.LayoutSpec(layout.ZORDER, ("x", "day"), layout.SAMPLE, None, RECORD_KEY)
    work = GroupRewrite("", given.base_files, given.file_ids, bare, sample_rows=400)
    rows = pa.concat_tables(pq.read_table(storage.full_path(p)) for p in paths)
    spec, cuts = sampled_layout(rows, work)
    picked = np.sort(np.random.default_rng(SAMPLE_SEED).choice(3000, 400, replace=False))
    sample = rows.take(pa.array(picked))
    for c, bounds in zip(("x", "day"), spec.boundaries, strict=True):
        assert np.array_equal(bounds, layout.column_boundaries(layout.direct_keys(sample.column(c)), 400))
    assert cuts.equals(layout.range_boundaries(layout.sort_keys(sample, spec), 5, snap=layout.CELL_SNAP))
    assert cuts.num_rows == 4

    sampled = rewrite_group(storage, work, schema, INSTANT, BaseFileOptions(), threads=2)
    explicit = GroupRewrite("", given.base_files, given.file_ids, spec, cuts)
    again = rewrite_group(storage, explicit, schema, "20260101000000001", BaseFileOptions(), threads=1)
    assert [s["num_writes"] for s in sampled] == [s["num_writes"] for s in again]
    for a, b in zip(sampled, again, strict=True):
        ta, tb = (pq.read_table(storage.full_path(s["path"])).drop_columns([FILE_NAME]) for s in (a, b))
        assert ta.equals(tb)
    # Everything sampled when the group is smaller than the sample.
    whole = GroupRewrite("", given.base_files, given.file_ids, bare, sample_rows=10_000)
    spec_all, _ = sampled_layout(rows, whole)
    assert np.array_equal(spec_all.boundaries[0], layout.column_boundaries(layout.direct_keys(rows.column("x")),
                                                                           layout.MAX_COLUMN_BOUNDARIES))
