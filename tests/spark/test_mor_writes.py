"""Merge-on-read writes (table version 6) read back by hudi-rs exactly as hoodpy reads them.

A partitioned table (key ``id``, ordering field ``ts``) goes through one sequence of writes per log data block
format (Avro, Hudi's default, and parquet): bulk_insert, upserts whose updates go to log files (and whose
inserts go to new base files, or into a small base-file-only slice), a stale update, a delete, a re-insert of a
deleted key, a ``_hoodie_is_deleted`` delete, a deltacommit that fails and is rolled back by the next write, and
an insert_overwrite of one partition. A Python model predicts the rows after each commit. The tests check:

* snapshot after each commit: hoodpy == model, hudi-rs == hoodpy (every column, meta columns included);
* read-optimized after each commit: hudi-rs (``hoodie.read.use.read_optimized.mode``) == hoodpy == the rows of
  the latest base files, read with pyarrow;
* time travel to every completed instant and incremental ranges over the deltacommits: hoodpy == hudi-rs;
* on storage: instants are deltacommits (replacecommit for the overwrite), updates and deletes went to new log
  files ``.<fileId>_<baseInstant>.log.<n>_<token>`` with the meta fields Java writes, write stats are
  HoodieDeltaWriteStats, and the failed deltacommit's files are gone with a rollback instant naming them.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.compat import hudi_rs
from tests.compat.hudi_rs import COMMIT_TIME, PARTITION_PATH, RECORD_KEY
from java_samples import MOR_V6, unzip_sample
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.meta_fields import COMMIT_SEQNO, FILE_NAME
from hoodpy.services.rollback import read_rollback_metadata
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format as lf
from hoodpy.timeline.instant import Action
from hoodpy.write import commit as commit_step

pytestmark = [pytest.mark.spark]

DDL = ("id int, name string, region string, ts long, amt decimal(10,2), t timestamp, tags array<string>, "
       "info struct<a:int,b:string>, m map<string,int>")
COLUMNS = ("id", "name", "region", "ts", "amt", "t", "tags", "info", "m")
MODEL_COLUMNS = (RECORD_KEY, COMMIT_TIME, PARTITION_PATH, *COLUMNS)
UTC = dt.timezone.utc
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}


def row(i: int, ts: int, variant: int = 0) -> dict[str, Any]:
    return {"id": i, "name": f"n{i}v{variant}", "region": f"r{i % 2}", "ts": ts, "amt": Decimal(f"{i}.{variant:02d}"),
            "t": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=i, minutes=variant),
            "tags": None if i % 5 == 0 else [f"x{i}", f"v{variant}"],
            "info": {"a": i * 10 + variant, "b": None if i % 4 == 0 else f"s{i}"},
            "m": None if i % 3 == 0 else [(f"k{variant}", i)]}


def to_df(spark, rows: list[dict[str, Any]], deleted: bool = False):
    tuples = [tuple((r[c]["a"], r[c]["b"]) if c == "info" else dict(r[c]) if c == "m" and r[c] else r[c]
                    for c in COLUMNS) + ((r.get("_deleted", False),) if deleted else ()) for r in rows]
    return spark.createDataFrame(tuples, DDL + (", _hoodie_is_deleted boolean" if deleted else ""))


class Model:
    """The expected table under event-time ordering: (partition, key) -> row."""

    def __init__(self):
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    @staticmethod
    def loc(r: dict[str, Any]) -> tuple[str, str]:
        return f"region={r['region']}", str(r["id"])

    def write(self, op: str, batch: list[dict[str, Any]], instant: str) -> None:
        if op == "delete":
            for r in batch:
                self.rows.pop(self.loc(r), None)
            return
        if op == "insert_overwrite":
            parts = {self.loc(r)[0] for r in batch}
            self.rows = {k: v for k, v in self.rows.items() if k[0] not in parts}
        for r in batch:
            old = self.rows.get(self.loc(r))
            if op == "upsert" and old is not None and r["ts"] < old["ts"]:
                continue  # event time: the stored record with the larger ordering value stays
            if r.get("_deleted"):
                self.rows.pop(self.loc(r), None)
                continue
            pp, key = self.loc(r)
            self.rows[(pp, key)] = {**{c: r[c] for c in COLUMNS}, RECORD_KEY: key, PARTITION_PATH: pp,
                                    COMMIT_TIME: instant}

    def snapshot(self) -> list[dict[str, Any]]:
        return hudi_rs.project(hudi_rs.normalize(list(self.rows.values())), MODEL_COLUMNS)


@dataclass
class Step:
    instant: str
    op: str
    expected: list[dict[str, Any]]
    hoodpy: list[dict[str, Any]]
    hudi_rs: list[dict[str, Any]]
    hoodpy_ro: list[dict[str, Any]]
    hudi_rs_ro: list[dict[str, Any]]
    base_rows: list[dict[str, Any]]


@dataclass
class Built:
    fmt: str
    path: str
    table: HoodieTable
    steps: list[Step] = field(default_factory=list)
    failed: str = ""  # the deltacommit that failed
    pending_reads: tuple = ()  # (hoodpy, hudi-rs) rows while the failed deltacommit was pending


def _base_file_rows(table: HoodieTable) -> list[dict[str, Any]]:
    """The rows of the latest base files, read with pyarrow (what read-optimized queries return)."""
    tables = [pq.read_table(table.storage.full_path(bf.path)) for bf in table.file_system_view().latest_base_files()]
    return hudi_rs.rows_of(pa.concat_tables(tables, promote_options="default")) if tables else []


def _record(out: Built, model: Model, op: str, instant: str) -> None:
    t = out.table
    out.steps.append(Step(instant, op, model.snapshot(), hudi_rs.df_rows(t.read()), hudi_rs.snapshot(out.path),
                          hudi_rs.df_rows(t.read(query_type="read_optimized")), hudi_rs.read_optimized(out.path),
                          _base_file_rows(t)))


def _fail_next_commit(monkeypatch) -> None:
    """The next write dies between writing its files and completing (as a killed writer leaves it): its
    instant stays inflight with its log and base files."""
    def crash(*_a, **_k):
        raise RuntimeError("writer killed before the commit")

    monkeypatch.setattr(commit_step, "commit", crash)
    monkeypatch.setattr(commit_step, "abort", lambda *_a, **_k: 0)


@pytest.fixture(scope="module", params=["avro", "parquet"])
def built(request, spark, tmp_path_factory) -> Built:
    fmt = request.param
    path = str(tmp_path_factory.mktemp(f"mor_{fmt}") / "table")
    table = HoodieTable.create(spark, path, table_name=f"mor_{fmt}", record_key_fields=["id"],
                               partition_fields=["region"], precombine_field="ts", hive_style_partitioning=True,
                               table_type="MERGE_ON_READ", options={"hoodie.logfile.data.block.format": fmt})
    out = Built(fmt, path, table)
    model = Model()
    sequence = [
        ("bulk_insert", [row(i, 10) for i in range(1, 11)], {}),
        # Updates to logs; the new keys start new file groups (no small files).
        ("upsert", [row(2, 20, 1), row(3, 20, 1), row(11, 20), row(12, 20)], NO_SMALL_FILES),
        # A stale update (ts 5 < 10) and updates of a key updated before (its second log version); key 13 goes
        # into the small base-file-only slice of key 11 (r1), which is rewritten with its update.
        ("upsert", [row(4, 5, 9), row(3, 30, 2), row(11, 30, 2), row(13, 30)], {}),
        ("delete", [row(1, 0), row(6, 0), row(99, 0)], {}),
        # Key 1 comes back after its delete; key 8 goes by a delete flag carrying its ordering value.
        ("upsert", [row(1, 40, 3), {**row(8, 40), "_deleted": True}], NO_SMALL_FILES),
    ]
    for op, batch, options in sequence:
        result = table.write(to_df(spark, batch, deleted=any("_deleted" in r for r in batch)), op, options=options)
        model.write(op, batch, result.instant_time)
        _record(out, model, op, result.instant_time)

    # A deltacommit that fails after writing its log and base files; hoodpy and hudi-rs skip its blocks.
    mp = pytest.MonkeyPatch()
    _fail_next_commit(mp)
    try:
        with pytest.raises(RuntimeError, match="killed"):
            table.upsert(to_df(spark, [row(2, 50, 7), row(14, 50)]), options=NO_SMALL_FILES)
    finally:
        mp.undo()
    [pending] = table.timeline.pending_writes()
    out.failed = pending.timestamp
    out.pending_reads = (hudi_rs.df_rows(table.read()), hudi_rs.snapshot(path))
    # The next write rolls it back first.
    batch = [row(5, 60, 4), row(7, 60, 4)]
    result = table.upsert(to_df(spark, batch), options=NO_SMALL_FILES)
    model.write("upsert", batch, result.instant_time)
    _record(out, model, "upsert", result.instant_time)

    batch = [row(2, 70, 5), row(20, 70, 5)]  # r0 replaced: its groups with log files go
    result = table.insert_overwrite(to_df(spark, batch))
    model.write("insert_overwrite", batch, result.instant_time)
    _record(out, model, "insert_overwrite", result.instant_time)
    return out


def test_snapshot_after_each_write_matches_model_and_hudi_rs(built):
    for step in built.steps:
        assert hudi_rs.project(step.hoodpy, MODEL_COLUMNS) == step.expected, (step.op, step.instant)
        assert step.hudi_rs == step.hoodpy, (step.op, step.instant)
    final = {r["id"]: r for r in built.steps[-1].hoodpy}
    assert sorted(final) == [1, 2, 3, 5, 7, 9, 11, 13, 20]


def test_read_optimized_is_the_base_files(built):
    for step in built.steps:
        assert step.hudi_rs_ro == step.hoodpy_ro == step.base_rows, (step.op, step.instant)
    # Key 3's updates are in logs only: read-optimized still has its bulk_insert row, snapshot the latest update.
    third = built.steps[2]
    assert {r["id"]: r["ts"] for r in third.hoodpy_ro}[3] == 10
    assert {r["id"]: r["ts"] for r in third.hoodpy}[3] == 30


def test_time_travel_and_incremental_match_hudi_rs(built):
    table = built.table
    instants = [s.instant for s in built.steps]
    assert [i.timestamp for i in table.timeline.completed_commits()] == instants
    for step in built.steps:
        ours = hudi_rs.df_rows(table.read(as_of=step.instant))
        assert hudi_rs.project(ours, MODEL_COLUMNS) == step.expected, step.instant
        assert ours == hudi_rs.snapshot(built.path, as_of=step.instant), step.instant
    for start, end in zip(instants, instants[1:]):
        ours = hudi_rs.df_rows(table.read_incremental(start, end))
        theirs = hudi_rs.incremental(built.path, start, end)
        if end == built.steps[2].instant:
            # hudi-rs 0.5.0 filters log records by commit time before merging them with the base row, so the
            # stale update (key 4, ts 5 < stored 10) shows; Java Hudi merges the slice first, as hoodpy does.
            stale = [r for r in theirs if r[RECORD_KEY] == "4"]
            assert [r["ts"] for r in stale] == [5]
            theirs = [r for r in theirs if r not in stale]
        assert ours == theirs, (start, end)
        assert {r[COMMIT_TIME] for r in ours} <= {end}


def test_failed_deltacommit_is_invisible_then_rolled_back(built):
    before_failure = built.steps[4]
    hoodpy_rows, hudi_rows = built.pending_reads
    assert hoodpy_rows == hudi_rows == before_failure.hoodpy  # its blocks and base file do not count
    timeline = built.table.timeline
    assert not timeline.pending_writes() and timeline.find(built.failed) is None
    [rollback] = timeline.filter(actions=[Action.ROLLBACK])
    meta = read_rollback_metadata(built.table.storage, rollback)
    assert meta["commitsRollback"] == [built.failed]
    deleted = [Path(p).name for pm in meta["partitionMetadata"].values() for p in pm["successDeleteFiles"]]
    logs = [parse_log_file_name(n) for n in deleted if n.startswith(".")]
    bases = [parse_base_file_name(n) for n in deleted if not n.startswith(".")]
    # Key 2's update went to a log file of its slice, key 14 into a new base file: both gone.
    assert len(logs) == 1 and logs[0] is not None and len(bases) == 1 and bases[0].instant_time == built.failed
    assert all(not list(Path(built.path).rglob(n)) for n in deleted)
    assert not (Path(built.path) / ".hoodie" / ".temp" / built.failed).exists()


def _deltacommit(path: str, instant: str) -> dict:
    return json.loads((Path(path) / ".hoodie" / f"{instant}.deltacommit").read_text())


def test_instants_files_and_write_stats_are_hudis(built):
    path = Path(built.path)
    hoodie = path / ".hoodie"
    for step in built.steps:
        action = "replacecommit" if step.op == "insert_overwrite" else "deltacommit"
        assert {p.name for p in hoodie.glob(f"{step.instant}.*")} == {
            f"{step.instant}.{action}.requested", f"{step.instant}.{action}.inflight", f"{step.instant}.{action}"}
    assert not list(hoodie.glob("*.commit"))
    upsert = built.steps[1]
    meta = _deltacommit(built.path, upsert.instant)
    assert meta["operationType"] == "UPSERT" and meta["compacted"] is False
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    log_stats = [s for s in stats if "logVersion" in s]
    base_stats = [s for s in stats if "logVersion" not in s]
    assert len(log_stats) == 2 and len(base_stats) == 2  # keys 2 / 3 (r0 / r1) updated; 11 / 12 new groups
    for s in log_stats:
        name = s["path"].rsplit("/", 1)[-1]
        parsed = parse_log_file_name(name)
        assert parsed is not None and parsed.file_id == s["fileId"] and parsed.version == s["logVersion"] == 1
        assert parsed.base_instant_time == s["prevCommit"] == built.steps[0].instant  # the bulk_insert's slice
        assert s["logOffset"] == 0 and s["numWrites"] == s["numUpdateWrites"] == 1 and s["numInserts"] == 0
        assert s["baseFile"].startswith(s["fileId"]) and s["baseFile"].endswith(f"_{parsed.base_instant_time}.parquet")
        assert s["logFiles"] == [name] and s["recordsStats"] == {"val": None}
        assert s["fileSizeInBytes"] == s["totalWriteBytes"] == (path / s["path"]).stat().st_size
    assert all(s["prevCommit"] == "null" and s["numInserts"] == 1 for s in base_stats)
    assert _deltacommit(built.path, built.steps[0].instant)["operationType"] == "BULK_INSERT"
    delete = _deltacommit(built.path, built.steps[3].instant)
    assert delete["operationType"] == "DELETE"
    assert sorted(s["numDeletes"] for ss in delete["partitionToWriteStats"].values() for s in ss) == [1, 1]


def test_log_records_carry_hudis_meta_fields(built):
    """Each new log file holds the blocks of one deltacommit: data blocks of the chosen format with the
    instant, the table schema with the meta fields first, ``_hoodie_file_name`` = the file id; deletes in a
    delete block."""
    from hoodpy.file_group.log_file import data_rows, deleted_records
    from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema

    logs = sorted(Path(built.path).rglob(".*.log.*"), key=lambda p: parse_log_file_name(p.name).order)
    assert logs
    kinds = set()
    for log in logs:
        name = parse_log_file_name(log.name)
        blocks = list(lf.scan_blocks(log.read_bytes()))
        assert len({b.instant_time for b in blocks}) == 1
        for block in blocks:
            kinds.add(block.block_type)
            schema = block.header[lf.SCHEMA]
            assert json.loads(schema)["fields"][0]["name"] == "_hoodie_commit_time"
            if block.block_type == lf.DELETE_BLOCK:
                assert all(d.record_key and d.partition_path.startswith("region=") for d in deleted_records(block))
                continue
            rows = data_rows(block, arrow_schema_from_avro(parse_avro_schema(schema))).to_pylist()
            for r in rows:
                assert r[COMMIT_TIME] == block.instant_time and r[FILE_NAME] == name.file_id
                assert r[COMMIT_SEQNO].startswith(f"{block.instant_time}_") and r[RECORD_KEY] == str(r["id"])
    data_kind = lf.AVRO_DATA_BLOCK if built.fmt == "avro" else lf.PARQUET_DATA_BLOCK
    assert kinds == {data_kind, lf.DELETE_BLOCK}
    # The deletes carried no ordering value but for key 8's flag: that one keeps its ts (long 40).
    flagged = [d for log in logs for b in lf.scan_blocks(log.read_bytes()) if b.block_type == lf.DELETE_BLOCK
               for d in deleted_records(b) if d.record_key == "8"]
    assert [d.ordering_value for d in flagged] == [40]


def test_properties_are_javas_for_a_mor_table(built):
    """hoodie.properties holds every key Java Hudi 0.14 writes for a v6 merge-on-read table, with the payload
    class of hoodpy's merge mode (event time: DefaultHoodieRecordPayload)."""
    from hoodpy.config.properties import load_table_properties

    ours = load_table_properties(built.table.storage)
    java_dir = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", Path(built.path).parent / "java")
    java = {}
    for line in (java_dir / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            java[k] = v
    assert set(java) - set(ours) == set()
    assert ours["hoodie.table.type"] == "MERGE_ON_READ" and ours["hoodie.table.version"] == "6"
    assert ours["hoodie.compaction.payload.class"] == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert ours["hoodie.compaction.record.merger.strategy"] == java["hoodie.compaction.record.merger.strategy"]


def test_large_logs_are_not_forced_into_a_broadcast(built, spark, monkeypatch, capsys):
    """Above BROADCAST_LOG_BYTES of logs, the keys they name are joined however Spark plans it (here, with
    Spark's own broadcast threshold off, a sort-merge join): the rows stay the same."""
    from hoodpy.read import slice_scan

    table = HoodieTable.for_path(spark, built.path)
    expected = hudi_rs.df_rows(table.read())
    monkeypatch.setattr(slice_scan, "BROADCAST_LOG_BYTES", 0)
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        df = HoodieTable.for_path(spark, built.path).read()
        df.explain()
        plan = capsys.readouterr().out
        assert hudi_rs.df_rows(df) == expected
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assert "LeftAnti" in plan and "BroadcastHashJoin" not in plan and "SortMergeJoin" in plan, plan



def test_anti_join_keys_give_the_same_rows(built, spark, monkeypatch, capsys):
    """A few base files with logs are scanned one by one and anti-joined on one long (file index << 40 |
    row position); more than KEYED_SCANS are scanned at once and joined on (file name, position): the same
    rows either way, hudi-rs's, at the instant with the most base files with logs."""
    from hoodpy.read import slice_scan

    table = HoodieTable.for_path(spark, built.path)

    def logged(step):
        return sum(1 for s in table.file_system_view(as_of=step.instant).latest_file_slices()
                   if s.log_files and s.base_file is not None)

    step = max(built.steps, key=logged)
    assert logged(step) > 1  # files after the first are keyed past 1 << 40
    for keyed_scans, file_column in ((slice_scan.KEYED_SCANS, False), (0, True)):
        monkeypatch.setattr(slice_scan, "KEYED_SCANS", keyed_scans)
        df = HoodieTable.for_path(spark, built.path).read(as_of=step.instant)
        df.explain()
        assert ("_hoodpy_base_file" in capsys.readouterr().out) == file_column
        assert hudi_rs.df_rows(df) == step.hudi_rs, keyed_scans


def test_read_of_some_columns_merges_only_those(built, spark, capsys):
    """read(columns=...) at every instant gives the model's rows of those columns, in that order, though
    they leave out the record key and the ordering field the merge compares (the stale update, ts 5 < 10,
    must still lose); a filter may name a column not selected. The Python tasks that merge log records
    return only the columns read needs (not ``tags``, ``info``, ``m``, ...), the key and ordering field
    among them."""
    columns = ["amt", "NAME", "id"]  # Spark's names ignore case; the schema's spelling comes out
    spelled = ["amt", "name", "id"]
    table = HoodieTable.for_path(spark, built.path)
    for step in built.steps:
        df = table.read(as_of=step.instant, columns=columns)
        assert df.columns == spelled
        assert hudi_rs.df_rows(df) == hudi_rs.project(step.expected, spelled), (step.op, step.instant)
        filtered = table.read(as_of=step.instant, columns=["name"], filters=[("ts", ">=", 20)])
        assert hudi_rs.df_rows(filtered) == hudi_rs.project([r for r in step.expected if r["ts"] >= 20], ["name"])
    step = max(built.steps, key=lambda s: sum(1 for fs in table.file_system_view(as_of=s.instant)
                                               .latest_file_slices() if fs.log_files))
    table.read(as_of=step.instant, columns=columns).explain()
    [merge] = [line for line in capsys.readouterr().out.splitlines() if "MapInArrow" in line and "merge" in line]
    assert "ts#" in merge and "_hoodie_record_key#" in merge and "amt#" in merge, merge
    assert "tags#" not in merge and "info#" not in merge and "region#" not in merge, merge
