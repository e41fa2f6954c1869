"""Incremental windows the cleaner reached: refused naming the window and the earliest readable start, read
when only other file groups were cleaned, and read by a full scan with Hudi's fallback option (Python API and
``hudi_table_changes`` with ``SET``)."""

from __future__ import annotations

import pytest

from hoodpy.errors import ChangesNotReadableError
from hoodpy.table import HoodieTable
from sql_ext import disable, enable
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

DDL = "id int, part string, ts long, v string"
FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"
CLEAN = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1",
         "hoodie.parquet.compression.codec": "snappy"}


@pytest.fixture(scope="module")
def cleaned(spark, tmp_path_factory):
    """Two file groups (p0: id 1, p1: id 2), each rewritten later; every clean keeps one version per group.
    c1 writes both, c2 rewrites p0 (c1's p0 version cleaned), c3 rewrites p1, c4 rewrites p0 again."""
    path = str(tmp_path_factory.mktemp("windows") / "t")
    t = HoodieTable.create(spark, path, table_name="windows", record_key_fields=["id"], partition_fields=["part"],
                           precombine_field="ts", options=CLEAN)
    df = lambda rows: spark.createDataFrame(rows, DDL)  # noqa: E731
    c = [t.insert(df([(1, "p0", 1, "a1"), (2, "p1", 1, "b1")])).instant_time,
         t.upsert(df([(1, "p0", 2, "a2")])).instant_time,
         t.upsert(df([(2, "p1", 3, "b3")])).instant_time,
         t.upsert(df([(1, "p0", 4, "a4")])).instant_time]
    return t, c


def _rows(df) -> list[tuple]:
    return sorted((r.id, r.v) for r in df.collect())


def test_a_window_whose_versions_were_cleaned_is_refused_naming_the_earliest_readable_start(cleaned):
    t, c = cleaned
    with pytest.raises(ChangesNotReadableError) as refused:
        t.read_incremental(c[0], c[2])  # needs p0's c2 version, cleaned after c4
    message = str(refused.value)
    assert f"({c[0]}, {c[2]}]" in message and "cleaner removed" in message and FALLBACK in message
    assert refused.value.earliest_start == c[1]  # after c2, the last write of the cleaned group
    assert _rows(t.read_incremental(c[1], c[2])) == [(2, "b3")]


def test_a_window_is_read_when_only_groups_it_does_not_touch_were_cleaned(cleaned):
    """(c2, c3] touches p1 only; p0's version as of c3 is cleaned, which a time-travel read would need."""
    t, c = cleaned
    assert _rows(t.read_incremental(c[1], c[2])) == [(2, "b3")]
    assert [(r["id"], r["v"]) for r in hudi_rs.incremental(t.base_path, c[1], c[2])] == [(2, "b3")]
    assert _rows(t.read_incremental(c[2])) == [(1, "a4")]


def test_the_fallback_reads_the_latest_snapshot_rows_committed_in_the_window(spark, cleaned):
    t, c = cleaned
    fallback = HoodieTable.for_path(spark, t.base_path, options={FALLBACK: "true"})
    # id 1's c2 version is gone; its latest version (c4) is outside the window: left to the window after.
    assert _rows(fallback.read_incremental(c[0], c[1])) == []
    assert _rows(fallback.read_incremental(c[0], c[2])) == [(2, "b3")]
    assert _rows(fallback.read_incremental(c[0])) == [(1, "a4"), (2, "b3")]


def test_hudi_table_changes_takes_the_fallback_from_the_session(spark, cleaned):
    t, c = cleaned
    call = f"SELECT id, v FROM hudi_table_changes('{t.base_path}', 'latest_state', '{c[0]}', '{c[2]}')"
    enable(spark)
    try:
        with pytest.raises(ChangesNotReadableError, match="earliest readable start"):
            spark.sql(call)
        spark.sql(f"SET {FALLBACK}=true")
        assert _rows(spark.sql(call)) == [(2, "b3")]
    finally:
        spark.conf.unset(FALLBACK)
        disable(spark)
