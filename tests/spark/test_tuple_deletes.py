"""Deletes that carry several ordering fields' values (``_hoodie_is_deleted`` rows of a table ordered by
``ts,seq``) on merge-on-read tables.

At table version 9 the delete block holds each delete's tuple as Hudi 1.x writes it (an ArrayWrapper), so a
late delete, whose tuple is older than the stored row's, is ignored as Java ignores it, and the merge-on-read
rows equal the copy-on-write table's. At version 6 the delete block's ordering union has no branch for a tuple:
every delete applies there (the documented difference). Checked through the snapshot read, a CDC query, and
compaction; after compaction hudi-rs 0.5 (given a copy naming ``ts`` alone: it refuses a list of fields) reads
the same rows. Before compaction it is not asked: it decodes delete blocks with version 6's union only, where
the ArrayWrapper's index 12 is timestamp-micros.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM
from test_ordering_fields import _hudi_rs, _tuples  # the same columns; hudi-rs reads a copy ordered by ts

from hoodpy.config.properties import load_table_properties
from hoodpy.file_group.log_file import deleted_records, effective_blocks
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format as lf
from hoodpy.timeline.instant import EARLIEST_INSTANT
from hoodpy.timeline.timeline import CommittedInstants
from tests.compat import hudi_rs

pytestmark = [pytest.mark.spark]

DDL = "id int, p string, ts long, seq string, v string, _hoodie_is_deleted boolean"
BASE = [(i, "a", 5, "m", "v0", False) for i in range(1, 6)]
# 1: (5, l) older than (5, m): a late delete; 2: (5, n) newer: deletes; 3: a full tie: the later write, the
# delete, wins; 4: (4, z) older by the first field: late; 5: an update.
DELETES = [(1, "a", 5, "l", "", True), (2, "a", 5, "n", "", True), (3, "a", 5, "m", "", True),
           (4, "a", 4, "z", "", True), (5, "a", 6, "a", "v1", False)]
JAVA_ROWS = [(1, "a", 5, "m", "v0"), (4, "a", 5, "m", "v0"), (5, "a", 6, "a", "v1")]
# Version 6: the tuple cannot be written, every delete applies.
V6_ROWS = [(5, "a", 6, "a", "v1")]
EXPECTED = {"mor_v9": JAVA_ROWS, "cow_v9": JAVA_ROWS, "mor_v6": V6_ROWS}


@pytest.fixture(scope="module", params=["mor_v9", "cow_v9", "mor_v6"])
def built(request, spark, tmp_path_factory):
    kind = request.param
    path = str(tmp_path_factory.mktemp(kind) / "t")
    table = HoodieTable.create(
        spark, path, table_name=kind, record_key_fields=["id"], partition_fields=["p"], precombine_field="ts,seq",
        table_type="MERGE_ON_READ" if kind.startswith("mor") else "COPY_ON_WRITE",
        options={**SMALL_BLOOM, "hoodie.write.table.version": kind[-1], "hoodie.parquet.small.file.limit": "0"},
        table_properties={"hoodie.table.cdc.enabled": "true"})
    first = table.upsert(spark.createDataFrame(BASE, DDL)).instant_time
    second = table.upsert(spark.createDataFrame(DELETES, DDL)).instant_time
    return kind, table, first, second


def test_rows_follow_the_tuple(built):
    kind, table, _, _ = built
    assert _tuples(hudi_rs.df_rows(table.read())) == EXPECTED[kind]
    props = load_table_properties(table.storage)
    assert props["hoodie.table.version"] == kind[-1]


def test_delete_block_holds_the_tuples(built):
    kind, table, _, second = built
    if not kind.startswith("mor"):
        pytest.skip("copy-on-write writes no log files")
    logs = [p for p in Path(table.base_path).rglob(".*.log.*") if ".cdc" not in p.name]
    committed = CommittedInstants(frozenset({second}), second, layout=2 if kind.endswith("v9") else 1)
    deletes = {d.record_key: d.ordering_value for p in logs
               for b in effective_blocks([(str(p), p.read_bytes())], committed).blocks
               if b.block_type == lf.DELETE_BLOCK for d in deleted_records(b)}
    expected = {"1": (5, "l"), "2": (5, "n"), "3": (5, "m"), "4": (4, "z")}
    assert deletes == (expected if kind.endswith("v9") else dict.fromkeys(expected, 0))


def test_cdc_shows_only_the_deletes_that_applied(built):
    kind, table, _, second = built
    # Every change, then the second write's (version 9 windows go by completion time, not instant time).
    changes = sorted((r.op, json.loads(r.before or r.after)["id"]) for r in table.read_cdc(EARLIEST_INSTANT).collect()
                     if r.ts_ms == second)
    deleted = [1, 2, 3, 4] if kind == "mor_v6" else [2, 3]
    assert changes == sorted([("d", k) for k in deleted] + [("u", 5)])


def test_compaction_keeps_the_rows_and_hudi_rs_reads_them(built, spark):
    kind, table, _, _ = built
    if not kind.startswith("mor"):
        pytest.skip("copy-on-write")
    [result] = table.compaction.run()
    assert result.instant_time
    fresh = HoodieTable.for_path(spark, table.base_path)
    assert _tuples(hudi_rs.df_rows(fresh.read())) == EXPECTED[kind]
    assert _tuples(hudi_rs.df_rows(fresh.read(query_type="read_optimized"))) == EXPECTED[kind]
    assert _hudi_rs(table.base_path) == EXPECTED[kind]
    assert load_table_properties(fresh.storage)["hoodie.table.version"] == kind[-1]
