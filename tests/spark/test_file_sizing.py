"""File sizing: small inserts are bin-packed into small file groups instead of one file per batch;
small.file.limit=0 turns packing off; files at the limit stop receiving inserts; a large insert is cut
into new file groups of max.file.size / record size estimate records; a load into an empty table (bulk_insert,
insert, upsert) writes files within 25% of max.file.size but one remainder per partition, its record size
measured on a sample; an explicit estimate is used as set, and later commits size by the measured average."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, latest_files, read_base_file, rows

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string"
PACKED_BATCHES = 6
BATCH = 10
# Files here are a few KB (small bloom filters): all of them are "small" under a 512 KB limit.
LIMITS = {"hoodie.parquet.max.file.size": str(1024 * 1024), "hoodie.parquet.small.file.limit": str(512 * 1024)}


def _batch(spark, n):
    return spark.createDataFrame([(n * BATCH + i, 1, f"b{n}") for i in range(BATCH)], DDL)


@pytest.fixture(scope="module")
def sized(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("sizing") / "t")
    t = HoodieTable.create(spark, path, table_name="sizing_t", record_key_fields=["id"], precombine_field="ts",
                           options={**SMALL_BLOOM, **LIMITS})
    s = SimpleNamespace(t=t, packed=[], unpacked=[])
    for n in range(PACKED_BATCHES):
        s.packed.append(t.insert(_batch(spark, n)))
    s.files_packed = latest_files(t)

    for n in range(PACKED_BATCHES, PACKED_BATCHES + 2):
        s.unpacked.append(t.insert(_batch(spark, n), options={"hoodie.parquet.small.file.limit": "0"}))
    s.files_unpacked = latest_files(t)

    # The packed file is at the limit (size >= limit): only the two 10-row files are still small.
    (big,) = [bf for bf in t.file_system_view().latest_base_files() if bf.path in s.files_packed.values()]
    s.big = big
    s.limited = t.insert(_batch(spark, 99), options={"hoodie.parquet.small.file.limit": str(big.size)})
    s.files_limited = latest_files(t)
    s.total = rows(t.read(), "id")
    return s


def test_small_inserts_are_bin_packed_into_one_file_group(sized):
    s = sized
    assert len(s.files_packed) == 1
    (path,) = s.files_packed.values()
    assert read_base_file(s.t, path).num_rows == PACKED_BATCHES * BATCH
    assert s.packed[0].files_added == 1
    for k, (prev, result) in enumerate(zip(s.packed, s.packed[1:]), start=2):
        assert (result.files_added, result.files_updated, result.num_inserts) == (0, 1, BATCH)
        assert result.num_writes == k * BATCH  # the small file is rewritten with the new records
        (stat,) = result.metadata.write_stats
        assert stat.prev_commit == prev.instant_time


def test_small_file_limit_zero_creates_a_file_group_per_batch(sized):
    s = sized
    for result in s.unpacked:
        assert (result.files_added, result.files_updated, result.num_writes) == (1, 0, BATCH)
    assert len(s.files_unpacked) == 3
    assert set(s.files_packed.items()) <= set(s.files_unpacked.items())


def test_file_at_the_small_file_limit_receives_no_inserts(sized):
    s = sized
    r = s.limited
    assert (r.files_added, r.files_updated, r.num_inserts, r.num_writes) == (0, 1, BATCH, 2 * BATCH)
    (stat,) = r.metadata.write_stats
    assert stat.file_id != s.big.file_id
    assert stat.file_id in {fid for (_, fid) in s.files_unpacked}
    assert s.files_limited[("", s.big.file_id)] == s.big.path
    assert len(s.files_limited) == 3
    assert len(s.total) == (PACKED_BATCHES + 3) * BATCH


def test_large_insert_is_cut_by_max_file_size_over_record_estimate(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="split_t", record_key_fields=["id"],
                           options=SMALL_BLOOM)
    r = t.insert(spark.createDataFrame([(i, 1, "x") for i in range(100)], DDL),
                 options={"hoodie.parquet.max.file.size": str(25 * 1024),
                          "hoodie.copyonwrite.record.size.estimate": "1024"})
    assert (r.files_added, r.files_updated, r.num_inserts) == (4, 0, 100)  # 25 records per new file
    counts = [read_base_file(t, p).num_rows for p in latest_files(t).values()]
    assert sum(counts) == 100
    # Records are spread over the planned file groups by a hash of the key, as Hudi does: near 25 each.
    assert all(10 <= c <= 40 for c in counts), counts



def test_each_new_file_group_of_an_insert_is_written_by_its_own_task(spark, tmp_path, monkeypatch):
    from pyspark.sql import functions as F

    from hoodpy.write.merge import TARGET_FILE_ID
    from hoodpy.write.writer import Writer

    placed = Writer._one_task_per_new_group
    tasks = []

    def spied(self, records):
        out = placed(self, records)
        tasks.extend(out.select(F.spark_partition_id().alias("task"), TARGET_FILE_ID).distinct().collect())
        return out
    monkeypatch.setattr(Writer, "_one_task_per_new_group", spied)
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="tasks_t", record_key_fields=["id"],
                           options=SMALL_BLOOM)
    r = t.insert(spark.createDataFrame([(i, 1, "x") for i in range(100)], DDL),
                 options={"hoodie.parquet.max.file.size": str(25 * 1024),
                          "hoodie.copyonwrite.record.size.estimate": "1024"})
    # Four new groups, each one task's (hashing them into shuffle partitions could put two in one, and adaptive
    # execution coalesces small shuffle partitions: SF 1's two groups were written by one task).
    assert r.files_added == 4
    assert len(tasks) == 4 and len({x["task"] for x in tasks}) == 4
    assert {x[TARGET_FILE_ID] for x in tasks} == {fid for _, fid in latest_files(t)}
    assert sum(read_base_file(t, p).num_rows for p in latest_files(t).values()) == 100

# A fresh load is sized by bytes: a sample of the batch encoded as its files would be, plus each file's bloom
# filter (Hudi's default one: ~431 KB up to 60k keys, a large share of this small target).
TARGET = 1024 * 1024
FRESH = {"hoodie.parquet.max.file.size": str(TARGET), "hoodie.parquet.small.file.limit": str(TARGET // 2)}
FRESH_ROWS = 100_000


def _fresh_batch(spark, n=FRESH_ROWS):
    from pyspark.sql import functions as F

    # Hex digests: values that compress like real text, not to nothing.
    return spark.range(n).select(F.col("id").cast("int").alias("id"), F.lit(1).cast("long").alias("ts"),
                                 F.sha2(F.col("id").cast("string"), 256).alias("v"),
                                 (F.col("id") % 2).cast("string").alias("p"))


def _sizes_by_partition(t) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for bf in t.file_system_view().latest_base_files():
        out.setdefault(bf.partition_path, []).append(bf.size)
    return out


@pytest.mark.parametrize("operation", ["bulk_insert", "insert", "upsert"])
def test_fresh_load_files_are_within_a_quarter_of_the_target(spark, tmp_path, operation):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name=f"fresh_{operation}", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=FRESH)
    # bulk_insert: GLOBAL_SORT's planned files (NONE rolls per task: test_bulk_insert_sort_modes.py).
    options = {"hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"} if operation == "bulk_insert" else None
    result = getattr(t, operation)(_fresh_batch(spark), options=options)
    assert result.num_inserts == FRESH_ROWS
    sizes = _sizes_by_partition(t)
    assert set(sizes) == {"0", "1"}
    for partition, files in sizes.items():
        # 50k rows of ~40 bytes + a 431 KB bloom filter per 1 MB file: several files, one remainder at most.
        off = [s for s in files if not 0.75 * TARGET <= s <= 1.25 * TARGET]
        assert len(files) >= 3 and len(off) <= 1, (partition, sorted(files))
        assert all(s <= 1.25 * TARGET for s in files), (partition, sorted(files))
    assert len(rows(t.read(), "id")) == FRESH_ROWS


def test_an_explicit_record_size_estimate_is_used_as_hudi_uses_it(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="explicit_t", record_key_fields=["id"],
                           options={**FRESH, "hoodie.copyonwrite.record.size.estimate": "1024"})
    t.bulk_insert(_fresh_batch(spark, 5000).drop("p"), options={"hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"})
    counts = sorted(read_base_file(t, p).num_rows for p in latest_files(t).values())
    # 1 MB / 1024 bytes: 1024 records a file (the sample is the whole batch here, so the cuts are exact).
    assert counts == [904, 1024, 1024, 1024, 1024]


def test_a_later_commit_sizes_by_the_average_the_table_measured(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="later_t", record_key_fields=["id"],
                           options=FRESH)
    first = t.bulk_insert(_fresh_batch(spark, 60_000).drop("p"))
    average = first.total_bytes_written / first.num_writes
    more = _fresh_batch(spark, 120_000).drop("p").filter("id >= 60000")
    second = t.insert(more, options={"hoodie.parquet.small.file.limit": "0"})
    new = [s for s in second.metadata.write_stats]
    # New file groups of max.file.size / measured average records each (Hudi's rule), one remainder.
    per_file = int(TARGET // math.ceil(average))
    assert sum(s.num_writes for s in new) == 60_000
    assert sorted(s.num_writes for s in new)[1:] == pytest.approx([per_file] * (len(new) - 1), rel=0.05)


def test_a_commit_below_the_floor_sizes_new_files_without_sampling(spark, tmp_path, monkeypatch):
    """A commit under Hudi's representative floor whose files hold a sample's worth of records gives the record
    size (its bloom filters taken off), so the next write draws no sample of its batch (no Spark job)."""
    from hoodpy.write import bucket_assignment

    # A floor of 1e9 x the small-file limit: no commit here is representative by Hudi's rule. The writes below
    # set the limit to 1 byte (no file is small, so every insert goes to a new file; the floor is 1 GB).
    options = {**FRESH, "hoodie.record.size.estimation.threshold": "1000000000"}
    no_small = {"hoodie.parquet.small.file.limit": "1"}
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="below_floor_t", record_key_fields=["id"],
                           options=options)
    assert t.bulk_insert(_fresh_batch(spark, 20_000).drop("p")).num_writes == 20_000
    small = HoodieTable.create(spark, str(tmp_path / "s"), table_name="below_min_t", record_key_fields=["id"],
                               options=options)
    small.bulk_insert(_fresh_batch(spark, 1000).drop("p"))
    monkeypatch.setattr(bucket_assignment, "MEASURED_MIN_RECORDS", 20_000)

    def no_sample(*args, **kwargs):
        raise AssertionError("the batch was sampled")

    monkeypatch.setattr(bucket_assignment, "sample_records", no_sample)
    more = _fresh_batch(spark, 120_000).drop("p").filter("id >= 20000")
    second = t.upsert(more, options=no_small)
    assert second.num_inserts == 100_000
    sizes = sorted(s.file_size_in_bytes for s in second.metadata.write_stats)
    off = [s for s in sizes if not 0.75 * TARGET <= s <= 1.25 * TARGET]
    assert len(sizes) >= 3 and len(off) <= 1, sizes
    assert len(rows(t.read(), "id")) == 120_000

    # Fewer records than a sample's worth: the batch is sampled (here: the patched sampler refuses).
    with pytest.raises(AssertionError, match="was sampled"):
        small.upsert(_fresh_batch(spark, 3000).drop("p").filter("id >= 1000"), options=no_small)
