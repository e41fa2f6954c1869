"""bulk_insert: no index lookup, files sorted by record key with disjoint key ranges, sized by
max file size / record size estimate."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, key_range, latest_files, read_base_file, rows

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
# The planned, sorted layout these tests check is GLOBAL_SORT's (the default, NONE: test_bulk_insert_sort_modes.py).
SIZING = {"hoodie.parquet.max.file.size": str(10 * 1024), "hoodie.copyonwrite.record.size.estimate": "1024",
          "hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"}
PER_FILE = 10  # max file size / record size estimate


@pytest.fixture(scope="module")
def bulk(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bulk") / "t")
    t = HoodieTable.create(spark, path, table_name="bulk_t", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=SMALL_BLOOM)
    s = SimpleNamespace(t=t)
    # Keys arrive shuffled so that sorted files are the writer's doing.
    ids = [(i * 37) % 90 for i in range(90)]
    s.c1 = t.bulk_insert(spark.createDataFrame([(i, "xy"[i % 2], 1, f"v{i}") for i in ids], DDL), options=SIZING)
    s.files1 = latest_files(t)

    # Keys 0-4 exist already: bulk_insert must not look them up (Hudi writes them again). Key 0 comes twice
    # in the batch: hoodie.combine.before.insert keeps the one with the largest ordering value.
    import hoodpy.write.writer as writer_module

    def no_index(*args, **kwargs):
        raise AssertionError("bulk_insert looked up the index")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(writer_module, "index_for", no_index)
        batch = [(0, "x", 3, "dup0-latest")] + [(i, "xy"[i % 2], 2, f"dup{i}") for i in range(5)]
        s.c2 = t.bulk_insert(spark.createDataFrame(batch, DDL),
                             options={**SIZING, "hoodie.combine.before.insert": "true"})
    s.files2 = latest_files(t)
    s.rows2 = rows(t.read(), "id", "p", "v")
    return s


def test_bulk_insert_stats(bulk):
    c1 = bulk.c1
    assert c1.metadata.operation_type == "BULK_INSERT"
    assert (c1.num_writes, c1.num_inserts, c1.num_update_writes, c1.files_updated) == (90, 90, 0, 0)
    assert c1.files_added == len(bulk.files1)
    assert sum(s.num_writes for s in c1.metadata.write_stats) == 90


def test_bulk_insert_files_are_sorted_by_record_key(bulk):
    t = bulk.t
    for path in bulk.files1.values():
        keys = read_base_file(t, path).column("_hoodie_record_key").to_pylist()
        assert keys == sorted(keys), path
        assert key_range(t, path) == (keys[0], keys[-1])


def test_bulk_insert_key_ranges_do_not_overlap_within_a_partition(bulk):
    t = bulk.t
    for partition in ("x", "y"):
        ranges = sorted(key_range(t, path) for (p, _), path in bulk.files1.items() if p == partition)
        assert len(ranges) >= 2
        for (_, hi), (lo, _) in zip(ranges, ranges[1:]):
            assert hi < lo, ranges


def test_bulk_insert_sizes_files_by_max_size_over_record_estimate(bulk):
    t = bulk.t
    counts = {key: read_base_file(t, path).num_rows for key, path in bulk.files1.items()}
    assert sum(counts.values()) == 90
    assert max(counts.values()) <= PER_FILE
    per_partition = Counter(p for p, _ in counts)
    # 45 records per partition need at least 5 files of 10. Tasks are planned at 90% of a file (10 tasks
    # of ~9); a task splits its rows evenly, so no file is a nearly empty remainder.
    assert per_partition["x"] >= 5 and per_partition["y"] >= 5
    assert len(counts) <= 10 + 2


def test_bulk_insert_does_not_look_up_existing_keys(bulk):
    s = bulk
    assert (s.c2.num_inserts, s.c2.num_update_writes, s.c2.files_updated) == (5, 0, 0)
    # Old file groups untouched, the 5 keys written again in new file groups: duplicates, as in Hudi.
    for key, path in s.files1.items():
        assert s.files2[key] == path
    assert len(s.files2) == len(s.files1) + s.c2.files_added
    dup = Counter(r[0] for r in s.rows2)
    assert {k for k, n in dup.items() if n > 1} == {0, 1, 2, 3, 4}
    assert len(s.rows2) == 95
    assert sorted(r for r in s.rows2 if r[0] == 0) == [(0, "x", "dup0-latest"), (0, "x", "v0")]
