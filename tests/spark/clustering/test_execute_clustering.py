"""Clustering end to end: plan, execute, read back with hoodpy and hudi-rs."""

from __future__ import annotations

import math
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hoodpy.config.clustering import ClusteringConfig
from hoodpy.read.data_skipping import prune_by_column_stats
from hoodpy.errors import IllegalInstantTransitionError, PlanNotFoundError, WriteConflictError
from hoodpy.file_group.naming import base_file_name, new_file_id
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json, normalize_arrow_schema
from hoodpy.services.clustering import (
    ClusteringService,
    cluster_after_commit,
    execute,
    load_clustering_plan,
    resume_pending_clustering,
)
from hoodpy.table import HoodieTable
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, Instant, State, new_instant_time
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.write import commit as commit_step
from hoodpy.write.base_file import BaseFileOptions, write_base_file

pytestmark = pytest.mark.spark

OPTIONS = {"hoodie.index.bloom.num_entries": 100, "hoodie.parquet.compression.codec": "snappy"}
DDL = "id int, p string, ts int, x int, y int, name string"


DATA_SCHEMA = pa.schema([("id", pa.int32()), ("p", pa.string()), ("ts", pa.int32()), ("x", pa.int32()),
                         ("y", pa.int32()), ("name", pa.string())])


def _rows(rnd, start: int, count: int, partition: str, ts: int) -> list[dict]:
    return [{"id": start + i, "p": partition, "ts": ts, "x": rnd.randrange(1000), "y": rnd.randrange(1000),
             "name": f"n{rnd.randrange(10**6)}"} for i in range(count)]


def commit_files(t: HoodieTable, files: dict[str, list[list[dict]]]) -> str:
    """One bulk_insert-like commit written without Spark: each list of rows becomes one base file
    (meta columns, Hudi footer), then the completed instant. Keeps table setup fast and writer-independent."""
    instant = new_instant_time(after=t.timeline.latest_instant_time())
    schema_json = avro_schema_to_json(avro_schema_from_arrow(normalize_arrow_schema(DATA_SCHEMA), t.name))
    inflight = transitions.transition_to_inflight(t.storage, transitions.create_requested(t.storage, instant,
                                                                                          Action.COMMIT))
    meta = CommitMetadata(OperationType.BULK_INSERT, extra_metadata={"schema": schema_json})
    for partition, chunks in files.items():
        for chunk in chunks:
            file_id = new_file_id()
            name = base_file_name(file_id, "0-1-1", instant)
            rel = f"{partition}/{name}" if partition else name
            n = len(chunk)
            data = pa.Table.from_pylist(chunk, DATA_SCHEMA)
            table = pa.Table.from_arrays(
                [pa.array([instant] * n), pa.array([f"{instant}_0_{i}" for i in range(n)]),
                 pa.array([str(r["id"]) for r in chunk]), pa.array([partition] * n), pa.array([name] * n),
                 *data.columns], names=[*META_COLUMNS, *data.column_names])
            size = write_base_file(t.storage, rel, table, BaseFileOptions(compression="snappy", bloom_num_entries=100))
            meta.add_write_stat(WriteStat(file_id, rel, partition, num_writes=n, num_inserts=n,
                                          total_write_bytes=size, file_size_in_bytes=size))
    commit_step.commit(t.storage, inflight, meta)
    return instant


def make_table(spark, path, *, batches=2, rows=60, partitions=("p0", "p1"), rows_per_file=20, seed=0,
               ) -> HoodieTable:
    """``batches`` commits of ``rows`` rows spread over ``partitions``, ``rows_per_file`` rows per base file."""
    rnd = random.Random(seed)
    t = HoodieTable.create(spark, str(path), table_name="trips", record_key_fields=["id"],
                           partition_fields=["p"] if partitions else [], precombine_field="ts", options=OPTIONS)
    parts = list(partitions) or [""]
    for b in range(batches):
        per_partition = rows // len(parts)
        files = {}
        for pi, partition in enumerate(parts):
            data = _rows(rnd, b * rows + pi * per_partition, per_partition, partition or "none", b)
            files[partition] = [data[i:i + rows_per_file] for i in range(0, len(data), rows_per_file)]
        commit_files(t, files)
    return t


def rows_by_key(df_or_table) -> dict[str, dict]:
    rows = df_or_table.toArrow().to_pylist() if hasattr(df_or_table, "toArrow") else df_or_table.to_pylist()
    return {r["_hoodie_record_key"]: r for r in rows}


def hudi_rs_rows(path) -> dict[str, dict]:
    batches = HudiTableBuilder.from_base_uri(str(path)).build().read()
    return rows_by_key(pa.Table.from_batches(batches)) if batches else {}


def without_file_name(rows: dict[str, dict]) -> dict[str, dict]:
    return {k: {c: v for c, v in r.items() if c != "_hoodie_file_name"} for k, r in rows.items()}


def test_small_files_are_rewritten_into_sized_sorted_groups(spark, tmp_path):
    t = make_table(spark, tmp_path / "t", batches=2, rows=120, rows_per_file=20)
    view = t.file_system_view()
    old_ids = {(bf.partition_path, bf.file_id) for bf in view.latest_base_files()}
    assert all(len(view.latest_base_files([p])) >= 3 for p in ("p0", "p1"))
    before = rows_by_key(t.read())
    before_rs = hudi_rs_rows(t.base_path)
    assert without_file_name(before_rs) == without_file_name(before)
    last_commit = t.timeline.last_completed_commit().timestamp

    sizes = {p: sum(bf.size for bf in view.latest_base_files([p])) for p in ("p0", "p1")}
    target = max(sizes.values()) // 2 + 1
    plan = ClusteringService.of(t).schedule({ClusteringConfig.TARGET_FILE_MAX_BYTES.key: target,
                                   ClusteringConfig.SORT_COLUMNS.key: "x"})
    expected_outputs = {p: math.ceil(s / target) for p, s in sizes.items()}
    assert {g.partition_path: g.num_output_file_groups for g in plan.input_groups} == expected_outputs

    # A pending plan changes nothing for readers.
    assert rows_by_key(t.read()) == before
    assert hudi_rs_rows(t.base_path) == before_rs

    result = ClusteringService.of(t).execute(plan.instant_time)
    assert result.replaced_file_groups == len(old_ids) and result.num_writes == len(before)
    assert result.output_file_groups == sum(expected_outputs.values())

    after = rows_by_key(t.read())
    assert without_file_name(after) == without_file_name(before)  # commit time and seqno kept per record
    assert {r["_hoodie_file_name"] for r in after.values()}.isdisjoint({r["_hoodie_file_name"] for r in before.values()})
    new_view = t.file_system_view()
    new_files = new_view.latest_base_files()
    assert {(bf.partition_path, bf.file_id) for bf in new_files}.isdisjoint(old_ids)
    for p, n in expected_outputs.items():
        files = new_view.latest_base_files([p])
        assert len(files) == n
        counts = [pq.read_metadata(t.storage.full_path(bf.path)).num_rows for bf in files]
        assert max(counts) - min(counts) <= 1
        # each file is one contiguous range of x, sorted inside
        ranges = sorted((pq.read_table(t.storage.full_path(bf.path), columns=["x"]).column("x").to_pylist())
                        for bf in files)
        for a, b in zip(ranges, ranges[1:]):
            assert a == sorted(a) and a[-1] <= b[0]
        for bf in files:
            names = set(pq.read_table(t.storage.full_path(bf.path), columns=["_hoodie_file_name"])
                        .column(0).to_pylist())
            assert names == {bf.file_name}
            footer = pq.read_metadata(t.storage.full_path(bf.path)).metadata
            assert b"org.apache.hudi.bloomfilter" in footer and b"hoodie_min_record_key" in footer

    meta = t.timeline.commit_metadata(Instant(plan.instant_time, Action.REPLACECOMMIT))
    assert meta.operation_type == OperationType.CLUSTER
    assert meta.replaced_file_ids() == old_ids
    assert meta.schema == t.timeline.commit_metadata(Instant(last_commit, Action.COMMIT)).schema

    assert without_file_name(hudi_rs_rows(t.base_path)) == without_file_name(after)
    travelled = rows_by_key(t.read(as_of=last_commit))
    assert travelled == before  # the replaced groups, file names included
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        ClusteringService.of(t).execute(plan.instant_time)


def _cluster_copy(spark, source: Path, dest: Path, options) -> HoodieTable:
    shutil.copytree(source, dest)
    t = HoodieTable.for_path(spark, str(dest), options=OPTIONS)
    plan = ClusteringService.of(t).schedule(options)
    ClusteringService.of(t).execute(plan.instant_time)
    return t


def test_space_filling_curves_prune_the_second_sort_column(spark, tmp_path):
    base = make_table(spark, tmp_path / "base", batches=1, rows=1600, partitions=(), rows_per_file=400)
    total = sum(bf.size for bf in base.file_system_view().latest_base_files())
    common = {ClusteringConfig.SORT_COLUMNS.key: "x,y", ClusteringConfig.TARGET_FILE_MAX_BYTES.key: total // 4 + 1}
    layouts = {
        "linear": {}, "zorder": {"hoodie.layout.optimize.strategy": "z-order"},
        "hilbert": {"hoodie.layout.optimize.strategy": "hilbert"},
    }
    scanned = {}
    for name, extra in layouts.items():
        t = _cluster_copy(spark, tmp_path / "base", tmp_path / name, {**common, **extra})
        files = t.file_system_view().latest_base_files()
        assert len(files) == 4
        assert t.read().count() == 1600
        scanned[name] = {col: len(prune_by_column_stats(t.storage, files, [(col, "<", 200)])) for col in ("x", "y")}
        instant = t.timeline.completed_replacecommits()[-1]
        assert load_clustering_plan(t.storage, instant.timestamp).layout_strategy() == \
            ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.parse(extra.get("hoodie.layout.optimize.strategy", "linear"))
    assert scanned["linear"] == {"x": 1, "y": 4}
    for curve in ("zorder", "hilbert"):
        assert scanned[curve]["y"] < scanned["linear"]["y"], scanned
        assert scanned[curve]["x"] <= 2, scanned


def test_a_crashed_execution_is_rolled_back_and_rerun(spark, tmp_path, monkeypatch):
    t = make_table(spark, tmp_path / "t", batches=1, rows=60, partitions=("p0",))
    before = rows_by_key(t.read())
    plan = ClusteringService.of(t).schedule({ClusteringConfig.SORT_COLUMNS.key: "y,x",
                                   ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key: "hilbert",
                                   ClusteringConfig.CURVE_BUILD_METHOD.key: "SAMPLE"})
    assert load_clustering_plan(t.storage, plan.instant_time) == plan

    def crash(*args, **kwargs):
        raise SystemExit("killed before the commit")

    monkeypatch.setattr(execute.commit_step, "commit", crash)
    with pytest.raises(SystemExit):
        ClusteringService.of(t).execute(plan.instant_time)
    monkeypatch.undo()
    leftovers = [bf for bf in execute.list_base_files(t.storage) if bf.instant_time == plan.instant_time]
    assert leftovers  # files written, instant inflight, nothing completed
    assert t.timeline.find(plan.instant_time).state == State.INFLIGHT
    # a torn file from the crash, too
    t.storage.write_bytes(f"p0/{new_file_id()}_9-9-9_{plan.instant_time}.parquet", b"PAR1 torn")
    assert rows_by_key(t.read()) == before
    assert without_file_name(hudi_rs_rows(t.base_path)) == without_file_name(before)

    fresh = HoodieTable.for_path(spark, t.base_path, options=OPTIONS)
    assert resume_pending_clustering(fresh) == []  # only inline clustering resumes on its own
    [result] = resume_pending_clustering(fresh, {"hoodie.clustering.inline": "true"})
    assert result.instant_time == plan.instant_time
    assert result.output_file_groups == 1
    assert {bf.path for bf in execute.list_base_files(t.storage) if bf.instant_time == plan.instant_time} == \
        {s.path for s in result.metadata.write_stats}
    assert without_file_name(rows_by_key(fresh.read())) == without_file_name(before)
    assert without_file_name(hudi_rs_rows(t.base_path)) == without_file_name(before)


def test_a_plan_whose_inputs_changed_is_abandoned(spark, tmp_path):
    t = make_table(spark, tmp_path / "t", batches=1, rows=10, partitions=("p0",), rows_per_file=5)
    plan = ClusteringService.of(t).schedule()
    victim = plan.input_groups[0].slices[0]
    # Another writer commits a new version of one input file group after planning.
    later = "29990101000000000"
    inflight = transitions.transition_to_inflight(t.storage, transitions.create_requested(t.storage, later, Action.COMMIT))
    new_path = f"p0/{victim.file_id}_0-1-1_{later}.parquet"
    shutil.copy(victim.data_file_path, t.storage.full_path(new_path))
    meta = CommitMetadata(OperationType.UPSERT, extra_metadata={"schema": t.timeline.latest_schema()})
    meta.add_write_stat(WriteStat(victim.file_id, new_path, "p0", prev_commit=victim.base_instant_time))
    transitions.complete(t.storage, inflight, meta.to_json_bytes())
    with pytest.raises(WriteConflictError, match=later) as err:
        ClusteringService.of(t).execute(plan.instant_time)
    assert err.value.file_ids == [victim.file_id]
    assert t.timeline.find(plan.instant_time) is None  # the stale plan no longer blocks writers
    with pytest.raises(PlanNotFoundError):
        ClusteringService.of(t).execute(plan.instant_time)


def test_table_namespace_and_inline_clustering_after_commits(spark, tmp_path):
    # This table comes from the real writer: one bulk_insert cut into small files.
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="trips", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=OPTIONS)
    rnd = random.Random(1)
    split = {"hoodie.copyonwrite.insert.auto.split": "false", "hoodie.copyonwrite.insert.split.size": 5}
    t.bulk_insert(spark.createDataFrame([tuple(r.values()) for r in _rows(rnd, 0, 20, "p0", 1)], DDL),
                  options=split)
    assert len(t.file_system_view().latest_base_files()) >= 2
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": 2}
    assert cluster_after_commit(t, inline) is None  # one commit since the (absent) last clustering
    result = cluster_after_commit(t, {**inline, "hoodie.clustering.inline.max.commits": 1})
    assert result.num_writes == 20
    assert cluster_after_commit(t, {"hoodie.clustering.schedule.inline": "true",
                                    "hoodie.clustering.async.max.commits": 1}) is None  # 0 commits since
    service = ClusteringService.of(t)
    assert service.pending() == []
    plan = service.schedule(sort_columns=["name"], layout="hilbert")  # one column: a linear sort
    assert [p.instant_time for p in service.pending()] == [plan.instant_time]
    assert [(i, s) for i, s, _ in service.instants()] == [(plan.instant_time, "REQUESTED"),
                                                         (result.instant_time, "COMPLETED")]
    done = service.run()
    assert [r.instant_time for r in done] == [plan.instant_time]
    names = [r["name"] for r in pq.read_table(t.storage.full_path(done[0].metadata.write_stats[0].path)).to_pylist()]
    assert names == sorted(names)


def test_upsert_into_a_group_under_pending_clustering_fails_and_changes_nothing(spark, tmp_path):
    from hoodpy.errors import ClusteringUpdateError

    t = make_table(spark, str(tmp_path / "t"), batches=1, rows=40, partitions=("p0",), rows_per_file=20)
    plan = t.clustering.schedule(sort_columns="x", options={ClusteringConfig.SMALL_FILE_LIMIT.key: 10**9})
    assert plan is not None
    before_rows = rows_by_key(t.read())
    before_files = sorted(p.name for p in Path(t.base_path).rglob("*") if p.is_file())
    update = spark.createDataFrame([(0, "p0", 99, 1, 1, "changed")], DDL)
    with pytest.raises(ClusteringUpdateError, match=plan.instant_time):
        t.upsert(update)
    assert rows_by_key(t.read()) == before_rows
    assert sorted(p.name for p in Path(t.base_path).rglob("*") if p.is_file()) == before_files
    # Inserts still land, in new file groups outside the plan.
    result = t.insert(spark.createDataFrame([(1000, "p0", 1, 2, 3, "new")], DDL))
    assert result.files_added == 1 and result.files_updated == 0
    # Once the clustering ran, the update goes through.
    t.clustering.execute(plan.instant_time)
    t.upsert(update)
    assert rows_by_key(t.read())["0"]["name"] == "changed"


def test_a_scheduled_plan_is_executed_by_a_new_process(spark, tmp_path):
    import subprocess
    import sys

    t = make_table(spark, str(tmp_path / "t"), batches=2, rows=40, partitions=("p0",), rows_per_file=20)
    before = without_file_name(rows_by_key(t.read()))
    plan = t.clustering.schedule(sort_columns="x", layout="z-order")
    script = Path(__file__).with_name("execute_plan_process.py")
    proc = subprocess.run([sys.executable, str(script), t.base_path, plan.instant_time],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and f"EXECUTED {plan.instant_time}" in proc.stdout, proc.stderr[-3000:]
    timeline = t.timeline
    assert [i.timestamp for i in timeline.completed_replacecommits()] == [plan.instant_time]
    assert without_file_name(rows_by_key(t.read())) == before
    assert without_file_name(hudi_rs_rows(t.base_path)) == before
    assert len(t.file_system_view().latest_base_files()) == sum(g.num_output_file_groups for g in plan.input_groups)
