"""hoodie.bulkinsert.sort.mode: NONE (the default, as Hudi's) writes each Spark task's rows as they come, rolling
to a new file group per partition path when a file is full; PARTITION_SORT sorts within a task;
PARTITION_PATH_REPARTITION(_AND_SORT) gives each partition path one task; GLOBAL_SORT is the planned path
(tests/spark/test_bulk_insert.py). Footers (bloom filter, min/max key) stay right on unsorted files, and a value
hoodpy does not know is refused before anything is written."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hoodpy_spark_helpers import footer, key_range, latest_files, read_base_file, rows, timeline_files

from hoodpy.errors import InvalidConfigError
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY, BloomFilter
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

TARGET = 1024 * 1024
SIZED = {"hoodie.parquet.max.file.size": str(TARGET), "hoodie.parquet.small.file.limit": str(TARGET // 2)}
N = 100_000
TASKS = 3


def _batch(spark, n=N, tasks=TASKS):
    from pyspark.sql import functions as F

    # Keys arrive in a scrambled order (a multiplicative permutation of 0..n-1), hex digests compress like text.
    return (spark.range(n, numPartitions=tasks)
            .select(((F.col("id") * 7919) % n).cast("int").alias("id"), F.lit(1).cast("long").alias("ts"),
                    F.sha2(F.col("id").cast("string"), 256).alias("v"),
                    (F.col("id") % 2).cast("string").alias("p")))


def _create(spark, path, name, options=None, **kwargs):
    return HoodieTable.create(spark, str(path), table_name=name, record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", options={**SIZED, **(options or {})}, **kwargs)


def _by_task(t) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """(task's file id prefix, partition) -> [(file index within the task, relative path)]."""
    out = defaultdict(list)
    for (partition, file_id), path in latest_files(t).items():
        prefix, index = file_id.rsplit("-", 1)
        out[(prefix, partition)].append((int(index), path))
    return out


def _assert_footers_hold_keys(t):
    for path in latest_files(t).values():
        keys = read_base_file(t, path).column("_hoodie_record_key").to_pylist()
        assert key_range(t, path) == (min(keys), max(keys)), path
        bloom = BloomFilter.deserialize(footer(t, path)[FOOTER_BLOOM_FILTER_KEY])
        assert all(bloom.might_contain_many(keys)), path


@pytest.fixture(scope="module")
def unsorted(spark, tmp_path_factory):
    t = _create(spark, tmp_path_factory.mktemp("none") / "t", "none_t")
    result = t.bulk_insert(_batch(spark))  # the default mode
    return t, result


def test_none_is_the_default_and_writes_every_row_once(unsorted):
    t, result = unsorted
    assert result.num_inserts == N
    got = rows(t.read(), "id", "p", "v")
    assert sorted(r[0] for r in got) == list(range(N))


def test_none_rolls_files_by_size_per_task_and_partition(unsorted):
    t, _ = unsorted
    groups = _by_task(t)
    # No shuffle: each input partition's task writes its own files (file ids: the task's prefix plus a counter).
    assert len({prefix for prefix, _ in groups}) == TASKS
    assert {p for _, p in groups} == {"0", "1"}
    sizes = {bf.path: bf.size for bf in t.file_system_view().latest_base_files()}
    for key, files in groups.items():
        # One write token per task, as Hudi's row writer names a task's files.
        assert len({path.rsplit("/", 1)[1].split("_")[1] for _, path in files}) == 1, key
        off = [sizes[p] for _, p in files if not 0.75 * TARGET <= sizes[p] <= 1.25 * TARGET]
        assert len(off) <= 1 and all(sizes[p] <= 1.25 * TARGET for _, p in files), (key, sorted(sizes[p] for _, p in files))
    # ~33k rows per task and partition: several files each, so the roll was exercised.
    assert all(len(files) >= 2 for files in groups.values())
    # A task's counter numbers its files across partitions: no index is used twice.
    for prefix in {p for p, _ in groups}:
        indices = [i for (q, _), files in groups.items() if q == prefix for i, _ in files]
        assert sorted(indices) == list(range(len(indices)))


def test_none_files_are_unsorted_and_footers_still_hold_their_keys(unsorted):
    t, _ = unsorted
    unsorted_files = 0
    for path in latest_files(t).values():
        keys = read_base_file(t, path).column("_hoodie_record_key").to_pylist()
        unsorted_files += keys != sorted(keys)
    assert unsorted_files > 0  # rows kept their arrival order
    _assert_footers_hold_keys(t)


def test_upsert_after_a_none_load_updates_in_place(spark, unsorted):
    t, _ = unsorted
    from pyspark.sql import functions as F

    updates = _batch(spark).filter("id % 1000 = 0").withColumn("v", F.lit("new")).withColumn("ts", F.lit(2).cast("long"))
    r = t.upsert(updates)
    assert (r.num_inserts, r.num_update_writes) == (0, 100)
    got = rows(t.read(), "id", "v")
    assert len(got) == N
    assert sorted(i for i, v in got if v == "new") == list(range(0, N, 1000))


@pytest.mark.parametrize("mode", ["PARTITION_SORT", "PARTITION_PATH_REPARTITION_AND_SORT"])
def test_sorting_modes_write_sorted_files(spark, tmp_path, mode):
    t = _create(spark, tmp_path / "t", f"{mode.lower()}_t")
    assert t.bulk_insert(_batch(spark, 20_000), options={"hoodie.bulkinsert.sort.mode": mode}).num_inserts == 20_000
    for path in latest_files(t).values():
        keys = read_base_file(t, path).column("_hoodie_record_key").to_pylist()
        assert keys == sorted(keys), path
    groups = _by_task(t)
    if mode == "PARTITION_SORT":
        assert len({prefix for prefix, _ in groups}) == TASKS  # sorted in place: no shuffle
    else:  # one task per partition path
        assert len({p for _, p in groups}) == len(groups) == 2
    assert sorted(r[0] for r in rows(t.read(), "id")) == list(range(20_000))
    _assert_footers_hold_keys(t)


def test_partition_path_repartition_gives_a_partition_one_task(spark, tmp_path):
    t = _create(spark, tmp_path / "t", "repartition_t")
    t.bulk_insert(_batch(spark, 20_000), options={"hoodie.bulkinsert.sort.mode": "partition_path_repartition"})
    groups = _by_task(t)
    assert len({p for _, p in groups}) == len(groups) == 2
    assert sorted(r[0] for r in rows(t.read(), "id")) == list(range(20_000))


def test_an_unknown_sort_mode_is_refused_and_nothing_is_written(spark, tmp_path):
    t = _create(spark, tmp_path / "t", "bad_mode_t")
    before = timeline_files(t.base_path)
    with pytest.raises(InvalidConfigError) as e:
        t.bulk_insert(_batch(spark, 100), options={"hoodie.bulkinsert.sort.mode": "RANDOM"})
    message = str(e.value)
    assert "hoodie.bulkinsert.sort.mode" in message and "RANDOM" in message
    assert "GLOBAL_SORT" in message and "PARTITION_SORT" in message and "NONE" in message
    assert timeline_files(t.base_path) == before
    assert not latest_files(t)


def test_user_defined_sort_columns_are_warned_about_by_name(spark, tmp_path):
    t = _create(spark, tmp_path / "t", "sort_cols_t")
    with pytest.warns(UserWarning, match="hoodie.bulkinsert.user.defined.partitioner.sort.columns"):
        t.bulk_insert(_batch(spark, 100), options={"hoodie.bulkinsert.user.defined.partitioner.sort.columns": "v"})
    assert len(rows(t.read(), "id")) == 100


def test_merge_on_read_bulk_insert_with_none(spark, tmp_path):
    t = _create(spark, tmp_path / "t", "mor_none_t", table_type="MERGE_ON_READ")
    assert t.bulk_insert(_batch(spark, 20_000)).num_inserts == 20_000
    assert len(_by_task(t)) >= TASKS
    assert sorted(r[0] for r in rows(t.read(), "id")) == list(range(20_000))


def test_record_index_is_built_from_a_none_load(spark, tmp_path):
    """The metadata table's record index maps every key to the file NONE wrote it to: an upsert then updates
    in place (no duplicates) without a bloom lookup."""
    from pyspark.sql import functions as F

    t = _create(spark, tmp_path / "t", "rli_none_t",
                {"hoodie.index.type": "RECORD_INDEX", "hoodie.clean.automatic": "false"})
    t.bulk_insert(_batch(spark, 20_000))
    where = {}
    for path in latest_files(t).values():
        for key in read_base_file(t, path).column("_hoodie_record_key").to_pylist():
            where[key] = path
    updates = _batch(spark, 20_000).filter("id % 100 = 0").withColumn("v", F.lit("new"))
    r = t.upsert(updates.withColumn("ts", F.lit(2).cast("long")))
    assert (r.num_inserts, r.num_update_writes) == (0, 200)
    # The rewritten file groups are those the keys were written to.
    touched = {s.file_id for s in r.metadata.write_stats}
    assert touched == {path.rsplit("/", 1)[1].split("_")[0] for key, path in where.items() if int(key) % 100 == 0}
    got = rows(t.read(), "id", "v")
    assert len(got) == 20_000 and sorted(i for i, v in got if v == "new") == list(range(0, 20_000, 100))


def test_a_first_none_load_draws_no_sample_of_the_batch(spark, tmp_path, monkeypatch):
    """The write tasks size their files from their own first rows: no Spark job samples the batch, and the
    files are still within a quarter of the target but one remainder per (task, partition)."""
    from hoodpy.write import bucket_assignment

    def no_sample(*args, **kwargs):
        raise AssertionError("the batch was sampled")

    monkeypatch.setattr(bucket_assignment, "sample_records", no_sample)
    t = _create(spark, tmp_path / "t", "no_sample_t")
    assert t.bulk_insert(_batch(spark)).num_inserts == N
    sizes = {bf.path: bf.size for bf in t.file_system_view().latest_base_files()}
    for key, files in _by_task(t).items():
        off = [sizes[p] for _, p in files if not 0.75 * TARGET <= sizes[p] <= 1.25 * TARGET]
        assert len(files) >= 2 and len(off) <= 1 and all(sizes[p] <= 1.25 * TARGET for _, p in files), key
    assert sorted(r[0] for r in rows(t.read(), "id")) == list(range(N))


@pytest.mark.parametrize("mode", ["NONE", "PARTITION_PATH_REPARTITION"])
def test_keys_made_in_the_tasks_equal_the_jvms(spark, tmp_path, mode):
    """NONE's tasks make composite keys from the key fields (placeholders for null and empty values); the
    sorting modes take them from the JVM: the same keys either way, and footers hold them."""
    from pyspark.sql import functions as F

    batch = _batch(spark, 5_000).select(
        "id", "ts", "v", "p",
        F.when(F.col("id") % 7 == 0, F.lit(None)).when(F.col("id") % 7 == 1, F.lit(""))
        .otherwise(F.col("id").cast("string")).alias("name"))
    written = {}
    for m in (mode, "PARTITION_SORT"):
        t = HoodieTable.create(spark, str(tmp_path / m), table_name=f"keys_{m.lower()}",
                               record_key_fields=["id", "name"], partition_fields=["p"], precombine_field="ts",
                               options=SIZED)
        t.bulk_insert(batch, options={"hoodie.bulkinsert.sort.mode": m})
        written[m] = rows(t.read(), "_hoodie_record_key", "_hoodie_partition_path", "id", "name")
        _assert_footers_hold_keys(t)
    assert written[mode] == written["PARTITION_SORT"]
    keys = {r[0] for r in written[mode]}
    assert {"id:7,name:__null__", "id:8,name:__empty__", "id:9,name:9"} <= keys and len(keys) == 5_000


@pytest.mark.parametrize("mode", ["NONE", "PARTITION_SORT"])
def test_without_ordering_field_one_job_writes_and_its_tasks_refuse_null_keys(spark, tmp_path, mode):
    """With no ordering field to check, no Spark job reads the batch before the write (NONE: the tasks make the
    keys; PARTITION_SORT: the JVM makes them for the sort): a null key fails the write in its task, as
    InvalidRecordError, and the aborted instant leaves the table as it was."""
    from hoodpy_spark_helpers import tree
    from pyspark.sql import functions as F
    from spark_jobs import stage_names_by_job

    from hoodpy.errors import InvalidRecordError

    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="no_ordering", record_key_fields=["id"],
                           partition_fields=["p"], options={**SIZED, "hoodie.bulkinsert.sort.mode": mode})
    jobs = stage_names_by_job(spark, f"bulk-one-job-{mode}", lambda: t.bulk_insert(_batch(spark)))
    assert len(jobs) == 1, jobs
    assert sorted(r["id"] for r in t.read().select("id").collect()) == list(range(N))

    before = tree(t.base_path)
    instants = list(t.timeline.instants)
    bad = _batch(spark, 1000).withColumn("id", F.when(F.col("id") == 17, None).otherwise(F.col("id") + N))
    with pytest.raises(InvalidRecordError, match="null or empty record key") as info:
        t.bulk_insert(bad)
    assert "fields id" in str(info.value)
    assert tree(t.base_path) == before
    assert list(t.timeline.instants) == instants
    assert sorted(r["id"] for r in t.read().select("id").collect()) == list(range(N))
