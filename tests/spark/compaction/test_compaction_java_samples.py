"""Compaction of the Java Hudi 0.14 merge-on-read samples (table version 6, parquet log blocks): the plan Java
would write, one new base file per slice with logs, a COMPACT commit; snapshot reads unchanged, read-optimized
reads equal to them, hudi-rs reading the same rows. Also: reads while a compaction is pending (writers' logs
named after it), a failed attempt rolled back and re-executed, triggers, and bad input leaving tables as they
were."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from java_samples import MOR_V6, SAMPLES_DIR, file_digests, unzip_sample
from tests.compat import hudi_rs
from hoodpy.errors import CompactionError, IllegalInstantTransitionError, InvalidConfigError, PlanNotFoundError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, RECORD_KEY
from hoodpy.services.compaction.service import compact_after_commit
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format, transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.compaction_plan import CompactionPlan, pending_compaction_instant
from hoodpy.timeline.instant import Action, State, new_instant_time
from hoodpy.timeline.timeline import Timeline

pytestmark = [pytest.mark.spark, pytest.mark.compat]

# The samples with log files, and what their one plan holds: (partition, number of log files).
WITH_LOGS = {
    "v6_nonpartitioned": ("", 1),
    "v6_nonpartitioned_rollback": ("", 3),
    "v6_complexkeygen_hivestyle": ("byteField=10/shortField=300", 1),
    "v6_simplekeygen_nonhivestyle": ("10", 1),
}
V9_PLAN_ZIP = SAMPLES_DIR / "hudi-rs/sample_table/mor/avro/v9_txns_complex_nometa.zip"
V9_PLAN = "v9_txns_complex_nometa/.hoodie/timeline/20260307135909445.compaction.requested"


def hudi_plan_schema() -> dict:
    """The HoodieCompactionPlan schema Java Hudi (1.1) embeds in its plans: 0.14's plus a trailing field."""
    with zipfile.ZipFile(V9_PLAN_ZIP) as z:
        return fastavro.reader(io.BytesIO(z.read(V9_PLAN))).writer_schema


def without_file_names(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != FILE_NAME} for r in rows]


@dataclass
class Compacted:
    path: Path
    before: list[dict]  # hoodpy's snapshot before compaction
    plan: CompactionPlan
    plan_bytes: bytes
    table: HoodieTable


@pytest.fixture(scope="module", params=sorted(WITH_LOGS))
def compacted(request, spark, tmp_path_factory) -> Compacted:
    path = unzip_sample(f"{MOR_V6}/{request.param}", tmp_path_factory.mktemp(request.param))
    table = HoodieTable.for_path(spark, str(path))
    before = hudi_rs.df_rows(table.read())
    assert before == hudi_rs.snapshot(str(path))
    plan = table.compaction.schedule()
    plan_bytes = (path / ".hoodie" / f"{plan.instant_time}.compaction.requested").read_bytes()
    result = table.compaction.execute(plan.instant_time)
    assert (result.instant_time, result.operations, result.files_written) == (plan.instant_time, 1, 1)
    return Compacted(path, before, plan, plan_bytes, table)


def test_plan_is_what_java_writes(compacted):
    """One operation per latest slice with log files, file names relative to the partition, Java's metrics;
    the bytes decode with Hudi's own schema."""
    path, plan = compacted.path, compacted.plan
    partition, logs = WITH_LOGS[path.name]
    [op] = plan.operations
    folder = path / partition if partition else path
    on_disk = sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{op.file_id}_") and ".log." in p.name)
    assert (op.partition_path, len(op.delta_file_names), sorted(op.delta_file_names)) == (partition, logs, on_disk)
    assert op.data_file_name == next(p.name for p in folder.iterdir()
                                     if p.name.startswith(op.file_id) and p.name.endswith(f"_{op.base_instant_time}.parquet"))
    sizes = sum((folder / n).stat().st_size for n in op.delta_file_names)
    assert op.metrics == {"TOTAL_LOG_FILES": float(logs), "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0,
                          "TOTAL_LOG_FILES_SIZE": float(sizes), "TOTAL_IO_WRITE_MB": 0.0}
    [record] = list(fastavro.reader(io.BytesIO(compacted.plan_bytes),
                                    reader_schema=fastavro.parse_schema(hudi_plan_schema())))
    assert (record["version"], record["extraMetadata"], record["strategy"]) == (2, None, None)
    [java_op] = record["operations"]
    assert java_op["fileId"] == op.file_id and java_op["dataFilePath"] == op.data_file_name
    assert java_op["deltaFilePaths"] == list(op.delta_file_names) and java_op["baseInstantTime"] == op.base_instant_time
    # The inflight state is an empty file, as Java 0.14 writes it; the plan stays in .aux too.
    hoodie = path / ".hoodie"
    assert (hoodie / f"{plan.instant_time}.compaction.inflight").read_bytes() == b""
    assert (hoodie / ".aux" / f"{plan.instant_time}.compaction.requested").read_bytes() == compacted.plan_bytes


def test_reads_after_compaction(compacted):
    """The snapshot is unchanged but for the compacted rows' file name; read-optimized now equals it; hudi-rs
    reads the same rows both ways."""
    path, table = str(compacted.path), compacted.table
    after = hudi_rs.df_rows(table.read())
    assert without_file_names(after) == without_file_names(compacted.before)
    [op] = compacted.plan.operations
    new_names = {r[FILE_NAME] for r in after if r[FILE_NAME].startswith(op.file_id)}
    assert len(new_names) == 1 and new_names.pop().endswith(f"_{compacted.plan.instant_time}.parquet")
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == after
    assert hudi_rs.snapshot(path) == after
    assert hudi_rs.read_optimized(path) == after
    # Time travel to before the compaction still reads the old slice.
    last_delta = table.timeline.filter(actions=[Action.DELTACOMMIT], states=[State.COMPLETED])[-1].timestamp
    assert without_file_names(hudi_rs.df_rows(table.read(as_of=last_delta))) == without_file_names(compacted.before)


def test_commit_and_new_base_file(compacted):
    path, plan = compacted.path, compacted.plan
    [op] = plan.operations
    instant = plan.instant_time
    assert instant in hudi_rs.completed_instants(str(path))
    meta = json.loads((path / ".hoodie" / f"{instant}.commit").read_text())
    assert (meta["operationType"], meta["compacted"]) == ("COMPACT", True)
    assert json.loads(meta["extraMetadata"]["schema"])["type"] == "record"
    [stat] = meta["partitionToWriteStats"][op.partition_path]
    name = stat["path"].rsplit("/", 1)[-1]
    assert name.startswith(f"{op.file_id}_") and name.endswith(f"_{instant}.parquet")
    assert stat["path"] == (f"{op.partition_path}/{name}" if op.partition_path else name)
    assert (stat["fileId"], stat["prevCommit"], stat["partitionPath"]) == (op.file_id, op.base_instant_time,
                                                                          op.partition_path)
    assert stat["totalLogFilesCompacted"] == len(op.delta_file_names)
    assert stat["totalLogSizeCompacted"] == op.total_log_size
    rollback = path.name == "v6_nonpartitioned_rollback"
    # The rollback sample: two data blocks and the command block rolling the first back.
    assert (stat["totalLogBlocks"], stat["totalRollbackBlocks"], stat["totalCorruptLogBlock"]) == (
        (3, 1, 0) if rollback else (1, 0, 0))
    assert stat["totalLogRecords"] == 1 and stat["totalUpdatedRecordsCompacted"] == 1
    assert (stat["numUpdateWrites"], stat["numInserts"], stat["numDeletes"]) == (1, 0, 0)
    full = path / stat["path"]
    assert stat["fileSizeInBytes"] == stat["totalWriteBytes"] == full.stat().st_size
    rows = pq.read_table(full)
    assert stat["numWrites"] == rows.num_rows > 0
    # hoodpy's base file writer: Hudi's footer, file names stamped, commit times and sequence numbers kept.
    footer = pq.read_metadata(full).metadata
    assert b"org.apache.hudi.bloomfilter" in footer and b"hoodie_min_record_key" in footer
    assert set(rows.column(FILE_NAME).to_pylist()) == {name}
    kept = {(r[RECORD_KEY], r[COMMIT_TIME], r[COMMIT_SEQNO]) for r in compacted.before if r[FILE_NAME].startswith(op.file_id)}
    assert {(r[RECORD_KEY], r[COMMIT_TIME], r[COMMIT_SEQNO]) for r in rows.to_pylist()} == kept
    # Nothing left to compact: the new slice has no log files.
    assert compacted.table.compaction.schedule() is None


@pytest.mark.parametrize("name", ["v6_simplekeygen_hivestyle_no_metafields", "v6_empty",
                                  "v6_simplekeygen_nonhivestyle_overwritetable"])
def test_nothing_to_compact(spark, tmp_path, name):
    """No slice with log files (the overwrite sample's log belongs to a replaced file group): no plan, no
    file touched."""
    path = unzip_sample(f"{MOR_V6}/{name}", tmp_path)
    before = file_digests(path)
    table = HoodieTable.for_path(spark, str(path))
    assert table.compaction.schedule() is None and table.compaction.run() == []
    assert file_digests(path) == before


# -- while a compaction is pending ----------------------------------------------------------------------
def _log_named_after(path: Path, base_instant: str, write_instant: str, name: str) -> str:
    """A log file of the sample's group named after ``base_instant`` (the slice a pending compaction will
    create, where Java writers append), holding one block of the completed deltacommit ``write_instant``
    that renames Alice (key 1) and raises her ordering value; returns its name."""
    [java_log] = [p for p in path.iterdir() if ".log." in p.name and "_20250117083125837." in p.name]
    fid = java_log.name[1:].split("_")[0]
    [block] = log_format.scan_blocks(java_log.read_bytes())
    row = pq.read_table(pa.BufferReader(block.content))
    for column, value in (("name", name), ("longField", 1234567891), (COMMIT_TIME, write_instant),
                          (COMMIT_SEQNO, f"{write_instant}_0_1")):
        row = row.set_column(row.schema.get_field_index(column), column,
                             pa.array([value], row.schema.field(column).type))
    sink = pa.BufferOutputStream()
    pq.write_table(row, sink)
    log_name = f".{fid}_{base_instant}.log.1_0-99-1"
    (path / log_name).write_bytes(log_format.encode_block(
        log_format.PARQUET_DATA_BLOCK,
        {log_format.INSTANT_TIME: write_instant, log_format.SCHEMA: block.header[log_format.SCHEMA]},
        sink.getvalue().to_pybytes()))
    meta = json.loads((path / ".hoodie" / "20250117083136333.deltacommit").read_text())
    template = meta["partitionToWriteStats"][""][0]
    meta["partitionToWriteStats"] = {"": [{**template, "fileId": fid, "path": log_name, "prevCommit": base_instant,
                                           "logFiles": [log_name], "baseFile": ""}]}
    for suffix, body in ((".deltacommit.requested", ""), (".deltacommit.inflight", "{}"),
                         (".deltacommit", json.dumps(meta))):
        (path / ".hoodie" / f"{write_instant}{suffix}").write_text(body)
    return log_name


def _names(rows: list[dict]) -> dict[int, str]:
    return {r["id"]: r["name"] for r in rows}


def test_reads_while_compaction_pending(spark, tmp_path):
    """Logs named after a pending compaction C form the slice C will create; until C completes they are read
    merged with the slice before it (base file, its logs, then theirs). hoodpy shows the new write; after C
    completes the log belongs to C's slice and the snapshot is the same. (hudi-rs 0.5.0 leaves such logs out
    while the compaction is pending, so it is compared after completion only.)"""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    plan = table.compaction.schedule()
    [op] = plan.operations
    timeline = table.timeline
    assert pending_compaction_instant(table.storage, timeline, "", op.file_id) == plan.instant_time
    write = new_instant_time(after=plan.instant_time)
    log_name = _log_named_after(path, plan.instant_time, write, "Alice2")
    view = FileSystemView.load(table.storage, table.timeline)
    latest = view.file_group("", op.file_id).latest_slice()
    assert latest.base_instant_time == op.base_instant_time  # C's slice is not there yet: merged into this one
    assert [f.file_name for f in latest.log_files] == [*op.delta_file_names, log_name]
    expected = {1: "Alice2", 2: "Bob", 3: "Carol", 4: "Diana"}
    snapshot = hudi_rs.df_rows(table.read())
    assert _names(snapshot) == expected
    assert {r[COMMIT_TIME] for r in snapshot if r["id"] == 1} == {write}
    assert _names(hudi_rs.df_rows(table.read(query_type="read_optimized"))) == {**expected, 1: "Alice"}

    table.compaction.execute(plan.instant_time)
    after = hudi_rs.df_rows(table.read())
    assert _names(after) == expected and after == hudi_rs.snapshot(str(path))
    latest = FileSystemView.load(table.storage, table.timeline).file_group("", op.file_id).latest_slice()
    assert latest.base_instant_time == plan.instant_time and [f.file_name for f in latest.log_files] == [log_name]
    # The compacted base file holds what the plan's logs held, not the later write.
    ro = hudi_rs.df_rows(table.read(query_type="read_optimized"))
    assert _names(ro) == {**expected, 1: "Alice"} and ro == hudi_rs.read_optimized(str(path))
    # The file group is no longer in a pending compaction; the next plan takes the new slice's log.
    assert pending_compaction_instant(table.storage, table.timeline, "", op.file_id) is None
    [next_op] = table.compaction.schedule().operations
    assert (next_op.base_instant_time, next_op.delta_file_names) == (plan.instant_time, (log_name,))


# -- failures and bad input -----------------------------------------------------------------------------
def test_failed_attempt_is_rolled_back_and_executed_again(spark, tmp_path):
    """A crash left the compaction inflight with a partial base file: readers do not see it; executing again
    rolls the attempt back (a rollback instant deletes its file and reverts the compaction to requested,
    keeping the plan, as Hudi's rollbackInflightCompaction does) and runs the same plan."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned_rollback", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    before = hudi_rs.df_rows(table.read())
    plan = table.compaction.schedule()
    [op] = plan.operations
    plan_bytes = (path / ".hoodie" / f"{plan.instant_time}.compaction.requested").read_bytes()
    [requested] = table.timeline.pending([Action.COMPACTION])
    transitions.transition_to_inflight(table.storage, requested)
    stray = path / f"{op.file_id}_0-7-9_{plan.instant_time}.parquet"
    shutil.copy(path / op.data_file_name, stray)
    assert hudi_rs.df_rows(table.read()) == before  # an attempt that did not complete is invisible

    result = table.compaction.execute(plan.instant_time)
    assert not stray.exists() and result.files_written == 1
    timeline = table.timeline
    [rollback] = timeline.filter(actions=[Action.ROLLBACK], states=[State.COMPLETED])[-1:]
    assert plan.instant_time < rollback.timestamp
    rolled = deserialize(AvroModel.ROLLBACK_METADATA, table.storage.read_bytes(rollback.path))
    assert rolled["commitsRollback"] == [plan.instant_time]
    assert rolled["instantsRollback"] == [{"commitTime": plan.instant_time, "action": "compaction"}]
    assert [Path(p).name for p in rolled["partitionMetadata"][""]["successDeleteFiles"]] == [stray.name]
    assert (path / ".hoodie" / f"{plan.instant_time}.compaction.requested").read_bytes() == plan_bytes
    assert timeline.find(plan.instant_time).is_completed
    assert without_file_names(hudi_rs.df_rows(table.read())) == without_file_names(before)
    assert hudi_rs.snapshot(str(path)) == hudi_rs.df_rows(table.read())


def test_bad_input_leaves_the_table_unchanged(spark, tmp_path):
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path / "mor")
    table = HoodieTable.for_path(spark, str(path))
    before = file_digests(path)
    with pytest.raises(PlanNotFoundError, match=r"20250117083136333 is not a pending compaction .*none"):
        table.compaction.execute("20250117083136333")
    with pytest.raises(PlanNotFoundError, match="not a pending compaction"):
        table.compaction.execute("20990101000000000")
    with pytest.raises(InvalidConfigError, match="hoodie.compaction.target.io"):
        table.compaction.schedule({"hoodie.compaction.target.io": 0})
    with pytest.raises(InvalidConfigError, match="hoodie.compaction.strategy"):
        table.compaction.schedule({"hoodie.compaction.strategy": "org.example.Mine"})
    assert file_digests(path) == before
    done = table.compaction.run()[0].instant_time
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        table.compaction.execute(done)

    cow = unzip_sample("v6_nonpartitioned", tmp_path / "cow")
    cow_before = file_digests(cow)
    cow_table = HoodieTable.for_path(spark, str(cow))
    with pytest.raises(CompactionError, match="COPY_ON_WRITE table; compaction applies to MERGE_ON_READ"):
        cow_table.compaction.schedule()
    assert compact_after_commit(cow_table, {"hoodie.compact.inline": "true"}) is None
    assert file_digests(cow) == cow_before


def test_a_pending_write_blocks_scheduling(spark, tmp_path):
    """Hudi: the earliest pending write must be later than a new compaction (its logs would miss the plan)."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path)
    (path / ".hoodie" / "20250117090000000.deltacommit.requested").write_bytes(b"")
    before = file_digests(path)
    table = HoodieTable.for_path(spark, str(path))
    with pytest.raises(CompactionError, match="20250117090000000.*still pending"):
        table.compaction.schedule()
    assert file_digests(path) == before


# -- triggers -------------------------------------------------------------------------------------------
def test_compaction_after_a_commit(spark, tmp_path):
    """compact_after_commit on the sample's two deltacommits: inline compaction waits for
    max.delta.commits; schedule-inline plans for another job and not twice."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    before = file_digests(path)
    assert compact_after_commit(table) is None  # neither option set
    assert compact_after_commit(table, {"hoodie.compact.inline": "true"}) == []  # 2 of 5 deltacommits
    # The sample's first deltacommit is from January 2025: more than an hour ago, not more than 10**9 s.
    assert compact_after_commit(table, {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.seconds":
                                        str(10**9), "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}) == []
    assert file_digests(path) == before
    scheduled = {"hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    plan = compact_after_commit(table, scheduled)
    assert isinstance(plan, CompactionPlan) and table.compaction.pending_instant_times() == [plan.instant_time]
    assert compact_after_commit(table, scheduled) is None  # one is pending already
    # Inline: the pending one is finished first; then nothing new qualifies (the count restarts).
    [result] = compact_after_commit(table, {"hoodie.compact.inline": "true",
                                            "hoodie.compact.inline.max.delta.commits": "2"})
    assert result.instant_time == plan.instant_time and Timeline.load(table.storage).find(plan.instant_time).is_completed
    assert compact_after_commit(table, {"hoodie.compact.inline": "true",
                                        "hoodie.compact.inline.max.delta.commits": "1"}) == []


# -- inspect ------------------------------------------------------------------------------------------
def test_inspect_rows_list_compactions(spark, tmp_path):
    """show_timeline, show_commits(_metadata), show_fsview_* and show_compaction rows of a compaction,
    pending and completed (a completed compaction is a commit whose earlier states are compaction files)."""
    from hoodpy.inspect.commits import commits, commits_metadata
    from hoodpy.inspect.file_slices import all_slices, latest_slices
    from hoodpy.inspect.plans import compaction_plans
    from hoodpy.inspect.timeline import timeline_rows

    path = unzip_sample(f"{MOR_V6}/v6_simplekeygen_nonhivestyle", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    plan = table.compaction.schedule()
    [op] = plan.operations
    t = plan.instant_time
    newest = timeline_rows(table.storage).rows[0]
    assert newest[:3] == (t, "compaction", "REQUESTED") and newest[3] is not None and newest[4:6] == (None, None)
    assert compaction_plans(table.storage).rows == [(t, 1, "REQUESTED")]
    table.compaction.execute(t)
    newest = timeline_rows(table.storage).rows[0]
    assert newest[:3] == (t, "commit", "COMPLETED") and None not in newest[3:6]
    row = commits(table.storage).rows[0]
    assert (row[0], row[2], row[4], row[5], row[6], row[7], row[8]) == (t, "commit", 0, 1, 1, 2, 1)
    [meta] = [r for r in commits_metadata(table.storage).rows if r[0] == t]
    assert (meta[3], meta[4], meta[5]) == ("10", op.file_id, op.base_instant_time)
    assert meta[11:16] == (1, 0, 0, 1, 1)  # log blocks, corrupt, rollback blocks, log records, merged records
    latest = {r[1]: r for r in latest_slices(table.storage).rows}
    assert latest[op.file_id][2] == t and latest[op.file_id][3].endswith(f"_{t}.parquet")
    assert [r[2] for r in all_slices(table.storage).rows if r[1] == op.file_id] == [t, op.base_instant_time]
    assert compaction_plans(table.storage).rows == [(t, 1, "COMPLETED")]


def _delete_block(instant: str, schema: str, keys: list[str]) -> bytes:
    import struct

    from hoodpy.file_group.log_file import DELETE_RECORD_LIST_SCHEMA

    payload = io.BytesIO()
    fastavro.schemaless_writer(payload, fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA), {"deleteRecordList": [
        {"recordKey": k, "partitionPath": "", "orderingVal": 0} for k in keys]})
    return log_format.encode_block(log_format.DELETE_BLOCK, {log_format.INSTANT_TIME: instant, log_format.SCHEMA: schema},
                                   struct.pack(">ii", 3, len(payload.getvalue())) + payload.getvalue())


def test_all_deleted_slice_and_slice_of_logs_only(spark, tmp_path):
    """A delete block removing every key of a group (as Spark SQL DELETE writes one): the compacted slice is an
    empty base file, as Java's merge handle writes one. A group made of a log file only (a new file group
    written straight to logs) gets its first base file (prevCommit "null", the records as inserts)."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path)
    [java_log] = [p for p in path.iterdir() if ".log." in p.name]
    fid, base = java_log.name[1:].split("_")[0], "20250117083125837"
    [block] = log_format.scan_blocks(java_log.read_bytes())
    schema = block.header[log_format.SCHEMA]
    t3 = "20250117090000000"
    delete_log = f".{fid}_{base}.log.2_0-1-1"
    (path / delete_log).write_bytes(_delete_block(t3, schema, ["1", "2", "3"]))
    row = pq.read_table(pa.BufferReader(block.content))
    new_fid = "00000005-aaaa-4bbb-8ccc-dddddddddddd-0"
    for column, value in ((RECORD_KEY, "5"), ("id", 5), (COMMIT_TIME, t3), (FILE_NAME, new_fid)):
        row = row.set_column(row.schema.get_field_index(column), column, pa.array([value], row.schema.field(column).type))
    sink = pa.BufferOutputStream()
    pq.write_table(row, sink)
    new_log = f".{new_fid}_{t3}.log.1_0-1-2"
    (path / new_log).write_bytes(log_format.encode_block(
        log_format.PARQUET_DATA_BLOCK, {log_format.INSTANT_TIME: t3, log_format.SCHEMA: schema},
        sink.getvalue().to_pybytes()))
    meta = json.loads((path / ".hoodie" / "20250117083136333.deltacommit").read_text())
    template = meta["partitionToWriteStats"][""][0]
    meta["partitionToWriteStats"] = {"": [{**template, "fileId": f, "path": n, "prevCommit": b, "logFiles": [n]}
                                          for f, n, b in ((fid, delete_log, base), (new_fid, new_log, t3))]}
    for suffix, body in ((".deltacommit.requested", ""), (".deltacommit.inflight", "{}"),
                         (".deltacommit", json.dumps(meta))):
        (path / ".hoodie" / f"{t3}{suffix}").write_text(body)

    table = HoodieTable.for_path(spark, str(path))
    before = hudi_rs.df_rows(table.read())
    assert sorted(r["id"] for r in before) == [4, 5] and before == hudi_rs.snapshot(str(path))
    plan = table.compaction.schedule()
    assert {op.file_id: op.data_file_name is None for op in plan.operations} == {fid: False, new_fid: True}
    table.compaction.execute(plan.instant_time)
    after = hudi_rs.df_rows(table.read())
    assert without_file_names(after) == without_file_names(before)
    assert after == hudi_rs.snapshot(str(path)) == hudi_rs.read_optimized(str(path))
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == after
    stats = {s["fileId"]: s for s in json.loads((path / ".hoodie" / f"{plan.instant_time}.commit").read_text())
             ["partitionToWriteStats"][""]}
    emptied, created = stats[fid], stats[new_fid]
    assert (emptied["numWrites"], emptied["numDeletes"], emptied["prevCommit"]) == (0, 3, base)
    assert pq.read_table(path / emptied["path"]).num_rows == 0
    assert (created["numWrites"], created["numInserts"], created["prevCommit"]) == (1, 1, "null")
    assert created["totalLogRecords"] == 1 and created["runtimeStats"]["totalCreateTime"] >= 0
