"""An upsert whose records all go to one file group ships them to their one merge task without the group's
columns (the task adds the partition path and file id itself, log_append.each_file_group), and runs that job
with Spark's byte bound on Arrow batches lifted where it cannot bind (arrow_batches.batches_by_records): the
rows and their meta columns are what they were, copy-on-write and merge-on-read, and the session's setting is
the user's again after the write."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key

from hoodpy.table import HoodieTable
from hoodpy.write.writer import Writer
from hoodpy.write.arrow_batches import MAX_BYTES_KEY, MAX_RECORDS_KEY, UNBOUNDED, batches_by_records

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string, p string"
META = ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]


def _meta(table) -> dict[str, tuple]:
    return {r["_hoodie_record_key"]: (r["_hoodie_commit_time"], r["_hoodie_partition_path"], r["_hoodie_file_name"])
            for r in table.read().select(*META).collect()}


def _spy_arrow_batches(monkeypatch, spark) -> list[tuple]:
    """What each write job ran with: (the writer's one target, the byte bound, the record bound) inside
    Writer._arrow_batches."""
    seen = []
    arrow_batches = Writer._arrow_batches

    @contextmanager
    def spied(self):
        with arrow_batches(self):
            conf = spark.conf
            seen.append((self._one_target, conf.get(MAX_BYTES_KEY, None), conf.get(MAX_RECORDS_KEY, None)))
            yield
    monkeypatch.setattr(Writer, "_arrow_batches", spied)
    return seen


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_group_upsert_rows_and_meta_columns(spark, tmp_path, table_type, monkeypatch):
    seen = _spy_arrow_batches(monkeypatch, spark)
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="one_target_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", table_type=table_type,
                           options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}", "a") for i in range(6)], DDL))
    [group] = t.file_system_view().latest_base_files()
    # Updates and inserts of the one partition: all into its one (small) file group.
    result = t.upsert(spark.createDataFrame([(1, 2, "v1-new", "a"), (4, 2, "v4-new", "a"), (9, 2, "v9", "a")],
                                            DDL), options={"hoodie.copyonwrite.record.size.estimate": "40"})
    assert spark.conf.get(MAX_BYTES_KEY, None) is None  # unset again
    assert result.num_update_writes == 2 and result.num_inserts == 1
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1-new",), "2": ("v2",), "3": ("v3",),
                                     "4": ("v4-new",), "5": ("v5",), "9": ("v9",)}
    [merged] = t.file_system_view().latest_base_files()
    assert merged.file_id == group.file_id and merged.partition_path == "a"
    # Shipped without the group; byte bound lifted, record bound Spark's (10,000 of the estimate's 40 bytes fit).
    assert seen[-1] == (("a", group.file_id), str(UNBOUNDED), None)
    meta = _meta(t)
    assert {m[1] for m in meta.values()} == {"a"}
    assert {m[2] for m in meta.values()} == {merged.path.rsplit("/", 1)[-1]}
    instant = merged.instant_time
    assert {k for k, m in meta.items() if m[0] == instant} == {"1", "4", "9"}


def test_the_users_byte_bound_is_kept(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="bound_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}", "a") for i in range(4)], DDL))
    spark.conf.set(MAX_BYTES_KEY, "64m")
    try:
        with batches_by_records(spark, 10):
            assert spark.conf.get(MAX_BYTES_KEY) == "64m"
        t.upsert(spark.createDataFrame([(2, 2, "v2-new", "a")], DDL))
        assert spark.conf.get(MAX_BYTES_KEY) == "64m"
    finally:
        spark.conf.unset(MAX_BYTES_KEY)
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1",), "2": ("v2-new",), "3": ("v3",)}


def test_the_bound_is_lifted_only_inside_and_restored_on_failure(spark):
    with batches_by_records(spark, 28):
        assert spark.conf.get(MAX_BYTES_KEY) == str(UNBOUNDED)
    assert spark.conf.get(MAX_BYTES_KEY, None) is None
    with pytest.raises(RuntimeError):
        with batches_by_records(spark, 28):
            raise RuntimeError("the job failed")
    assert spark.conf.get(MAX_BYTES_KEY, None) is None
    with batches_by_records(spark, 100_000):  # records too wide for the default bound to be idle
        assert spark.conf.get(MAX_BYTES_KEY, None) is None


def test_a_first_load_takes_fewer_records_a_batch_then_the_users_bound_is_back(spark):
    with batches_by_records(spark, 1024):  # Hudi's record size estimate, before any commit measured one
        assert spark.conf.get(MAX_BYTES_KEY) == str(UNBOUNDED)
        assert spark.conf.get(MAX_RECORDS_KEY) == "4096"
    assert spark.conf.get(MAX_RECORDS_KEY, None) is None and spark.conf.get(MAX_BYTES_KEY, None) is None
    spark.conf.set(MAX_RECORDS_KEY, "20000")
    try:
        with batches_by_records(spark, 1024):
            assert spark.conf.get(MAX_RECORDS_KEY) == "4096"
        assert spark.conf.get(MAX_RECORDS_KEY) == "20000"
    finally:
        spark.conf.unset(MAX_RECORDS_KEY)


@pytest.mark.parametrize("sort_mode", ["NONE", "GLOBAL_SORT"])
def test_a_first_bulk_insert_feeds_its_tasks_by_record_count(spark, tmp_path, monkeypatch, sort_mode):
    seen = _spy_arrow_batches(monkeypatch, spark)
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="bulk_bound_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.bulk_insert(spark.createDataFrame([(i, 1, f"v{i}", "ab"[i % 2]) for i in range(50)], DDL),
                  options={"hoodie.bulkinsert.sort.mode": sort_mode})
    # NONE: no record size measured yet, Hudi's 1024-byte estimate, so 4096 records a batch and no byte check;
    # GLOBAL_SORT measured one on its sample (a few bytes a record), so Spark's record bound stays.
    assert seen == [(None, str(UNBOUNDED), "4096" if sort_mode == "NONE" else None)]
    assert spark.conf.get(MAX_BYTES_KEY, None) is None and spark.conf.get(MAX_RECORDS_KEY, None) is None
    assert by_key(t.read(), "v") == {str(i): (f"v{i}",) for i in range(50)}


def _spy_prebuilt(monkeypatch) -> dict[str, list]:
    """The merge inputs Writer._build_one_target_input built (and on which thread), and every
    decimal_transfer.ship call's input."""
    import threading

    from hoodpy.write import decimal_transfer

    seen: dict[str, list] = {"built": [], "shipped": []}
    build, ship = Writer._build_one_target_input, decimal_transfer.ship

    def built(records):
        one, shipped = build(records)
        seen["built"].append((threading.current_thread() is threading.main_thread(), shipped[0]))
        return one, shipped

    def shipping(rows):
        seen["shipped"].append(rows)
        return ship(rows)
    monkeypatch.setattr(Writer, "_build_one_target_input", staticmethod(built))
    monkeypatch.setattr(decimal_transfer, "ship", shipping)
    return seen


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_target_input_is_built_while_the_keys_are_collected(spark, tmp_path, table_type, monkeypatch):
    from decimal import Decimal

    ddl = "id int, ts long, amount decimal(12,2), p string"
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="prebuilt_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", table_type=table_type, options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, Decimal(f"{i}.10"), "a") for i in range(6)], ddl))
    seen = _spy_prebuilt(monkeypatch)
    t.upsert(spark.createDataFrame([(1, 2, Decimal("1.23"), "a"), (9, 2, Decimal("9999999999.99"), "a")], ddl))
    assert by_key(t.read(), "amount") == {
        **{str(i): (Decimal(f"{i}.10"),) for i in range(6)}, "1": (Decimal("1.23"),), "9": (Decimal("9999999999.99"),)}
    # Built off the main thread and shipped there, once: the merge job ran on that DataFrame, not shipped again.
    [(on_main, _)] = seen["built"]
    assert not on_main and len(seen["shipped"]) == 1

    # A batch repeating a key is combined first: the records differ from those prepared, the input built for them
    # goes unused, and the latest value of the key wins.
    seen["built"].clear()
    t.upsert(spark.createDataFrame([(2, 3, Decimal("2.50"), "a"), (2, 4, Decimal("2.75"), "a")], ddl))
    assert by_key(t.read(), "amount") == {
        **{str(i): (Decimal(f"{i}.10"),) for i in (0, 3, 4, 5)}, "1": (Decimal("1.23"),), "2": (Decimal("2.75"),),
        "9": (Decimal("9999999999.99"),)}
    assert len(seen["built"]) == 1
