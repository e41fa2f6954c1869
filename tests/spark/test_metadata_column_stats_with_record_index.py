"""column_stats and record_index kept together in one metadata table (table version 6): through upserts, a
delete, a clean and compactions of the metadata table, the rows equal a model, column_stats equals the footer
statistics of the listed base files and record_index the keys of the live file slices. Each data instant is
one metadata deltacommit writing to all three partitions; the compaction rewrites all three."""

from __future__ import annotations

from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, rows
from test_metadata_column_stats_writes import DDL, assert_index_matches as assert_column_stats_match
from test_record_index_writes import assert_index_matches_files as assert_record_index_matches
from test_record_index_writes import index_of as record_index_of
from tests.compat import hudi_rs

from hoodpy.config.properties import load_table_properties
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action, State

pytestmark = pytest.mark.spark

BOTH = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
        "hoodie.clean.automatic": "false", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.record.index.min.filegroup.count": "2"}


def test_column_stats_and_record_index_follow_upserts_deletes_clean_and_compaction(spark, tmp_path):
    path = str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="both", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options=BOTH)
    model: dict[int, tuple] = {}

    def upsert(batch):
        table.upsert(spark.createDataFrame(batch, DDL))
        model.update({i: (p, ts, v) for i, p, ts, v in batch})

    def check():
        assert_column_stats_match(path)
        assert_record_index_matches(path)
        assert set(record_index_of(path)) == {str(i) for i in model}
        assert rows(table.read(), "id", "p", "ts", "v") == sorted((i, *v) for i, v in model.items())

    upsert([(i, "ab"[i % 2], 1, f"x{i}") for i in range(8)])
    props = load_table_properties(table.storage)
    assert props["hoodie.table.metadata.partitions"] == "column_stats,files,record_index"
    instants = {i.timestamp for i in MetadataTable(table.storage).timeline.instants}
    # The first write built all three, each at its own instant (Java's unique init instants, after no completed
    # data instant: 00000000000000 + 010, 011, 012).
    assert {"00000000000000010", "00000000000000011", "00000000000000012"} <= instants
    check()

    upsert([(1, "b", 2, "y"), (2, "a", 2, "y"), (20, "b", 2, "new")])
    check()
    table.delete(spark.createDataFrame([(3, "b", 9, None), (20, "b", 9, None)], DDL))
    del model[3], model[20]
    check()
    upsert([(30, "a", 3, "z"), (4, "a", 3, "z")])
    clean = table.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert clean is not None and clean.total_files_deleted > 0
    check()

    # A data instant inserting a key: one metadata deltacommit writing files, column_stats and record_index (an
    # update in place leaves record_index alone, as in Hudi).
    upsert_instant = table.upsert(spark.createDataFrame([(5, "b", 4, "w"), (40, "b", 4, "w")], DDL)).instant_time
    model.update({5: ("b", 4, "w"), 40: ("b", 4, "w")})
    mdt_timeline = MetadataTable(table.storage).timeline
    deltacommit = mdt_timeline.find(upsert_instant, Action.DELTACOMMIT)
    assert deltacommit is not None and deltacommit.state == State.COMPLETED
    written = mdt_timeline.commit_metadata(deltacommit).partition_to_write_stats
    assert set(written) == {"files", "column_stats", "record_index"}
    check()

    # The metadata table was compacted (max.delta.commits 3): every partition got base files at a compaction
    # instant, and the slices of the build were cleaned (hoodie.metadata.cleaner.commits.retained, 3) once three
    # instants followed the first compaction (Java's rule: this write's sync).
    upsert([(6, "a", 5, "u")])
    check()
    meta = Path(path, ".hoodie", "metadata")
    compactions = {i.timestamp for i in MetadataTable(table.storage).timeline.filter(
        actions=[Action.COMMIT], states=[State.COMPLETED])}
    assert compactions
    hfiles = {part: {n.name.rsplit("_", 1)[-1].split(".")[0] for n in (meta / part).iterdir()
                     if n.name.endswith(".hfile")} for part in ("files", "column_stats", "record_index")}
    assert compactions & hfiles["files"] and compactions & hfiles["column_stats"] and compactions & hfiles[
        "record_index"]
    assert "00000000000000012" not in hfiles["record_index"] and hfiles["record_index"] <= compactions

    expected = sorted((i, *v) for i, v in model.items())
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in hudi_rs.snapshot(path)) == expected
