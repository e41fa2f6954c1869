"""Structured Streaming into and out of hoodpy tables: ``writeStream.format("hoodpy")`` commits each micro-batch
exactly once across a crash and a restart from the checkpoint, and ``readStream.format("hoodpy")`` emits the
records of newly completed commits, resuming from its own checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hoodpy.errors import InvalidConfigError, InvalidRecordError, MissingConfigError
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline
from sql_ext.datasource.stream_sink import QUERY_ID_KEY, SINK_CHECKPOINT_KEY
from sql_ext.datasource.stream_source import HoodpyStreamReader
from tests.compat import hudi_rs
from tests.java_samples import MOR_V6, unzip_sample
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM, tree

pytestmark = pytest.mark.spark

CHILD = Path(__file__).with_name("stream_crash_child.py")
SCHEMA = "id int, ts long, v string, city string, _hoodie_is_deleted boolean"
OPTIONS = {"hoodie.table.name": "rides", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
           **SMALL_BLOOM}
CITY = {i: ("sf", "la", "ny")[i % 3] for i in range(1, 11)}


def row(i, ts, v=None, deleted=False):
    return {"id": i, "ts": ts, "v": v or f"v{i}@{ts}", "city": CITY[i], "_hoodie_is_deleted": deleted}


# One micro-batch per file: upserts and deletes (ordering field ts grows with every file).
PHASE_1 = [
    [row(i, 1) for i in range(1, 7)],
    [row(2, 2), row(3, 2), row(7, 2)],
    [row(4, 3, deleted=True), row(5, 3)],
    [row(1, 4), row(7, 4, deleted=True), row(8, 4)],
    [row(6, 5), row(9, 5), row(2, 5)],
]
PHASE_2 = [[row(3, 6), row(10, 6)], [row(8, 7)]]  # upserts only


def put_files(folder: Path, batches: list[list[dict]], first: int) -> None:
    """One JSON file per batch, modification times one second apart (the file source's order)."""
    folder.mkdir(exist_ok=True)
    for n, rows in enumerate(batches, start=first):
        f = folder / f"part-{n:03d}.json"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(f, (1_700_000_000 + n, 1_700_000_000 + n))


def final_state(batches: list[list[dict]]) -> list[tuple]:
    state: dict[int, dict] = {}
    for rows in batches:
        for r in rows:
            if r["_hoodie_is_deleted"]:
                state.pop(r["id"], None)
            else:
                state[r["id"]] = r
    return sorted((r["id"], r["ts"], r["v"], r["city"]) for r in state.values())


def table_rows(spark, path: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.read.format("hoodpy").load(path).select("id", "ts", "v", "city").collect())


def sink_checkpoints(path: str) -> list[tuple[str, str | None]]:
    """(batch id, query id) recorded by each completed commit, oldest first."""
    timeline = Timeline.load(Storage(path))
    out = []
    for instant in timeline.completed_commits():
        extra = timeline.commit_metadata(instant).extra_metadata
        out.append((json.loads(extra[SINK_CHECKPOINT_KEY])["default_single_writer"], extra.get(QUERY_ID_KEY)))
    return out


def run_sink(spark, source: Path, table: str, checkpoint: str):
    query = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source)).writeStream
             .format("hoodpy").options(**OPTIONS).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start(table))
    query.awaitTermination()
    return query


@pytest.fixture(scope="module")
def rides(api_spark, tmp_path_factory):
    """The sink's table after phase 1: the first run died right after committing batch 1, the restart finished."""
    root = tmp_path_factory.mktemp("stream")
    source, table, checkpoint = root / "source", str(root / "rides"), str(root / "rides_checkpoint")
    put_files(source, PHASE_1, 0)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, str(CHILD), str(source), table, checkpoint, json.dumps(OPTIONS), "1"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=root, check=False)
    assert done.returncode == 17 and "CRASH after committing batch 1" in done.stdout, done.stderr[-3000:]
    assert [b for b, _ in sink_checkpoints(table)] == ["0", "1"]
    assert not (Path(checkpoint) / "commits" / "1").exists()  # Spark never learnt that batch 1 was done
    restarted = run_sink(api_spark, source, table, checkpoint)
    assert next(p["batchId"] for p in restarted.recentProgress) == 1  # Spark replayed batch 1
    return root, source, table, checkpoint


def test_the_sink_commits_each_batch_once_across_a_crash(api_spark, rides):
    _, _, table, checkpoint = rides
    assert table_rows(api_spark, table) == final_state(PHASE_1)
    recorded = sink_checkpoints(table)
    assert [b for b, _ in recorded] == ["0", "1", "2", "3", "4"]  # the replayed batch 1 was not applied again
    query_id = json.loads((Path(checkpoint) / "metadata").read_text())["id"]
    assert {q for _, q in recorded} == {query_id}
    assert hudi_rs.snapshot_tuples(table, ["id", "ts", "v", "city"]) == final_state(PHASE_1)


def test_read_stream_mirrors_the_table_and_resumes_from_its_checkpoint(api_spark, rides):
    spark = api_spark
    root, source, table, checkpoint = rides
    mirror, mirror_checkpoint = str(root / "mirror"), str(root / "mirror_checkpoint")
    from_instant, from_instant_checkpoint = str(root / "from_instant"), str(root / "from_instant_checkpoint")
    meta = [c for c in spark.read.format("hoodpy").load(table).columns if c.startswith("_hoodie_")]
    mirror_options = {**OPTIONS, "hoodie.table.name": "mirror"}

    def copy(target: str, target_checkpoint: str, **read_options):
        query = (spark.readStream.format("hoodpy").options(**read_options).load(table).drop(*meta).writeStream
                 .format("hoodpy").options(**mirror_options).option("checkpointLocation", target_checkpoint)
                 .trigger(availableNow=True).start(target))
        query.awaitTermination()

    copy(mirror, mirror_checkpoint)  # from the earliest commit
    assert table_rows(spark, mirror) == table_rows(spark, table)
    phase_1_end = HoodieTable.for_path(spark, table).timeline.last_completed_commit().timestamp

    put_files(source, PHASE_2, len(PHASE_1))
    run_sink(spark, source, table, checkpoint)
    assert table_rows(spark, table) == final_state(PHASE_1 + PHASE_2)
    copy(mirror, mirror_checkpoint)  # resumes after what it read
    copy(from_instant, from_instant_checkpoint, **{"hoodie.datasource.streaming.startOffset": phase_1_end})

    # The batch recompute: the table itself, and its changes since phase 1 as an incremental query.
    assert table_rows(spark, mirror) == table_rows(spark, table)
    mirror_commits = hudi_rs.completed_instants(mirror)
    assert len(mirror_commits) == 2
    second = spark.read.format("hoodpy").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", mirror_commits[0]).load(mirror)
    changed = spark.read.format("hoodpy").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", phase_1_end).load(table)
    assert sorted(r.id for r in second.collect()) == sorted(r.id for r in changed.collect()) == [3, 8, 10]
    assert table_rows(spark, from_instant) == sorted(tuple(r) for r in changed.select("id", "ts", "v", "city")
                                                   .collect())


def test_start_offsets(api_spark, rides):
    _, _, table, _ = rides
    timeline = HoodieTable.for_path(api_spark, table).timeline
    times = [i.timestamp for i in timeline.completed_commits()]
    schema = api_spark.read.format("hoodpy").load(table).schema
    reader = HoodpyStreamReader({"path": table}, schema)
    assert reader.initialOffset() == {"instant": "0" * 17}
    latest = HoodpyStreamReader({"path": table, "hoodie.datasource.streaming.startoffset": "latest"}, schema)
    assert latest.initialOffset() == latest.latestOffset() == {"instant": times[-1]}
    given = HoodpyStreamReader({"path": table, "hoodie.datasource.streaming.startOffset": times[1][:14]}, schema)
    assert given.initialOffset() == {"instant": times[1][:14] + "000"}
    assert given.partitions(given.latestOffset(), given.latestOffset()) == []
    with pytest.raises(InvalidConfigError, match="earliest, latest or an instant"):
        HoodpyStreamReader({"path": table, "hoodie.datasource.streaming.startOffset": "yesterday"},
                           schema).initialOffset()


def test_read_stream_merges_merge_on_read_slices(api_spark, tmp_path):
    spark = api_spark
    path = str(unzip_sample(f"{MOR_V6}/v6_simplekeygen_nonhivestyle", tmp_path))
    query = (spark.readStream.format("hoodpy").load(path).writeStream.format("memory")
             .queryName("hoodpy_mor_stream").trigger(availableNow=True).start())
    query.awaitTermination()
    streamed = hudi_rs.df_rows(spark.sql("SELECT * FROM hoodpy_mor_stream"))
    theirs = hudi_rs.snapshot(path)
    assert streamed and hudi_rs.project(streamed, list(theirs[0])) == theirs


def test_the_sink_upserts_and_deletes_into_a_merge_on_read_table(api_spark, tmp_path):
    """writeStream into MERGE_ON_READ: each micro-batch one deltacommit (updates and deletes go to log files),
    inline compaction every third deltacommit from the sink's options; the table ends as the source's final
    state, and hudi-rs reads the same rows."""
    spark = api_spark
    source, table = tmp_path / "source", str(tmp_path / "mor")
    put_files(source, PHASE_1, 0)
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
               "hoodie.compact.inline.max.delta.commits": "3"}
    query = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source)).writeStream
             .format("hoodpy").options(**options).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start(table))
    query.awaitTermination()
    assert table_rows(spark, table) == final_state(PHASE_1)
    timeline = Timeline.load(Storage(table))
    actions = [i.action.value for i in timeline.completed_commits()]
    assert actions.count("deltacommit") == len(PHASE_1) and actions.count("commit") == 1  # one compaction
    batches = [json.loads(timeline.commit_metadata(i).extra_metadata[SINK_CHECKPOINT_KEY])["default_single_writer"]
               for i in timeline.completed_commits() if i.action.value == "deltacommit"]
    assert batches == [str(b) for b in range(len(PHASE_1))]
    assert list(Path(table).rglob(".*.log.*"))  # updates and deletes were appended as log blocks
    assert hudi_rs.snapshot_tuples(table, ["id", "ts", "v", "city"]) == final_state(PHASE_1)


def test_bad_sink_input_fails_at_start_or_leaves_the_table_unchanged(api_spark, tmp_path):
    spark = api_spark
    source = tmp_path / "source"
    put_files(source, [[row(1, 1)]], 0)
    stream = spark.readStream.schema(SCHEMA).json(str(source))
    target = str(tmp_path / "t")
    for options, error, match in (
            ({**OPTIONS, "hoodie.datasource.write.operation": "merge"}, InvalidConfigError, "operation"),
            ({**OPTIONS, "hoodie.datasource.write.recordkey.field": "rider_id"}, InvalidRecordError, "rider_id"),
            ({k: v for k, v in OPTIONS.items() if k != "hoodie.table.name"}, MissingConfigError,
             "hoodie.table.name")):
        with pytest.raises(error, match=match):
            stream.writeStream.format("hoodpy").options(**options) \
                .option("checkpointLocation", str(tmp_path / "cp0")).start(target)
    assert not spark.streams.active and not (tmp_path / "t").exists()

    run_sink(spark, source, target, str(tmp_path / "cp1"))
    before = tree(target)
    narrowed = spark.readStream.schema("id int, ts string, v string, city string").json(str(source))
    query = (narrowed.writeStream.format("hoodpy").options(**OPTIONS)
             .option("checkpointLocation", str(tmp_path / "cp2")).trigger(availableNow=True).start(target))
    with pytest.raises(Exception, match="not compatible with the table schema"):
        query.awaitTermination()
    deadline = time.time() + 30
    while query.isActive and time.time() < deadline:
        time.sleep(0.2)
    assert tree(target) == before


def test_the_sink_appends_with_generated_keys_without_a_record_key(api_spark, tmp_path):
    """Without hoodie.datasource.write.recordkey.field the sink appends, as Hudi 0.14+'s streaming sink with
    generated keys: each micro-batch one bulk_insert commit whose rows get new keys <instant>_<task>_<row>
    (a row repeated across batches is two records), the batch id recorded as for a keyed table."""
    spark = api_spark
    source, table = tmp_path / "source", str(tmp_path / "keyless")
    batches = [[row(1, 1), row(2, 1)], [row(1, 1), row(3, 2)]]
    put_files(source, [[{k: v for k, v in r.items() if k != "_hoodie_is_deleted"} for r in b] for b in batches], 0)
    options = {"hoodie.table.name": "events", "hoodie.datasource.write.partitionpath.field": "city"}
    query = (spark.readStream.schema("id int, ts long, v string, city string").option("maxFilesPerTrigger", 1)
             .json(str(source)).writeStream.format("hoodpy").options(**options)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start(table))
    query.awaitTermination()
    timeline = Timeline.load(Storage(table))
    commits = timeline.completed_commits()
    assert [timeline.commit_metadata(i).operation_type for i in commits] == ["BULK_INSERT", "BULK_INSERT"]
    assert [b for b, _ in sink_checkpoints(table)] == ["0", "1"]
    theirs = hudi_rs.snapshot(table)
    assert sorted((r["id"], r["ts"], r["city"]) for r in theirs) == [(1, 1, "la"), (1, 1, "la"), (2, 1, "ny"),
                                                                    (3, 2, "sf")]
    assert len({r["_hoodie_record_key"] for r in theirs}) == 4
    assert all(r["_hoodie_record_key"].startswith(r["_hoodie_commit_time"] + "_") for r in theirs)
    assert {r["_hoodie_commit_time"] for r in theirs} == {i.timestamp for i in commits}
