"""Randomized sequences of writes (insert, upsert, delete), crashed writes, rollbacks and table services
(compaction, clean, clustering) on copy-on-write and merge-on-read tables, with and without the metadata table,
compared with one in-memory model after every step.

After every step: hoodpy's snapshot and hudi-rs's equal the model; on merge-on-read tables hudi-rs's
read-optimized read equals hoodpy's; with the metadata table, its listing gives the same file-system view as a
storage listing of the committed files (a crashed write's files are on storage only) and hudi-rs reads the same
rows with hoodie.metadata.enable=true as without. At the end the next write heals every crash. A crash on a
merge-on-read table dies between the deltacommit's log files and its completion.

CI runs two derandomized sequences per table type plus one explicit sequence of every step; the `slow` tier
many more.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hoodpy import HoodieTable
from hoodpy.errors import CompactionError
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.write import commit as commit_step
from tests.spark.hoodpy_spark_helpers import assert_metadata_in_step, hudi_rs_rows, sequences

pytestmark = [pytest.mark.spark]

SCHEMA = "id int, part string, ts long, val string"
COLUMNS = ["id", "part", "ts", "val"]
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy",
           "hoodie.metadata.compact.max.delta.commits": "3"}
CLEAN = {"hoodie.cleaner.commits.retained": "1"}
CLUSTER = {"hoodie.clustering.plan.strategy.small.file.limit": "100000000"}
TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]

keys = st.integers(min_value=0, max_value=12)
step = st.one_of(
    st.tuples(st.just("insert"), st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=4, unique=True)),
    st.tuples(st.just("upsert"), st.lists(keys, min_size=1, max_size=5, unique=True)),
    st.tuples(st.just("delete"), st.lists(keys, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("crash"), st.lists(keys, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("rollback"), st.just([])),
    st.tuples(st.just("compact"), st.just([])),
    st.tuples(st.just("clean"), st.just([])),
    st.tuples(st.just("cluster"), st.just([])),
)


class Crash(BaseException):
    """Stands in for the process dying between writing files and publishing the commit."""


def _state(df) -> dict:
    if "id" not in df.columns:  # no commit has recorded a schema yet (all rolled back or crashed)
        assert df.count() == 0
        return {}
    return {r.id: (r.part, r.ts, r.val) for r in df.select(*COLUMNS).collect()}


# Every kind of step once, in an order that exercises each: logs to compact, a crash a compaction must wait
# for and the next write heals, a service instant the rollback undoes.
EVERY_STEP = [("upsert", [1, 2, 3, 4]), ("upsert", [1, 2]), ("crash", [3]), ("compact", []), ("delete", [4]),
              ("compact", []), ("insert", [7]), ("cluster", []), ("clean", []), ("rollback", [])]


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@sequences(2)
@example(steps=EVERY_STEP, metadata=True)
@given(steps=st.lists(step, min_size=4, max_size=6), metadata=st.booleans())
def test_sequences_match_the_model(spark, tmp_path_factory, table_type, steps, metadata):
    _check_sequence(spark, tmp_path_factory, table_type, steps, metadata)


@pytest.mark.slow
@pytest.mark.parametrize("table_type", TABLE_TYPES)
@sequences(40)
@given(steps=st.lists(step, min_size=4, max_size=10), metadata=st.booleans())
def test_many_sequences_match_the_model(spark, tmp_path_factory, table_type, steps, metadata):
    _check_sequence(spark, tmp_path_factory, table_type, steps, metadata)


def _crashing_upsert(table, df) -> None:
    real_commit, real_abort = commit_step.commit, commit_step.abort
    commit_step.commit = lambda *a, **k: (_ for _ in ()).throw(Crash())
    commit_step.abort = lambda *a, **k: None  # a dead process cleans nothing up
    try:
        with pytest.raises(Crash):
            table.upsert(df)
    finally:
        commit_step.commit, commit_step.abort = real_commit, real_abort


def _check_sequence(spark, tmp_path_factory, table_type, steps, metadata) -> None:
    path = str(tmp_path_factory.mktemp("model") / "t")
    options = {**OPTIONS, "hoodie.metadata.enable": str(metadata).lower()}
    table = HoodieTable.create(spark, path, table_name="model", record_key_fields=["id"],
                               partition_fields=["part"], precombine_field="ts", options=options,
                               table_type=table_type)
    mor = table_type == "MERGE_ON_READ"
    # (instant, model state) after each completed instant that changed or may be rolled back to
    history: list[tuple[str | None, dict]] = [(None, {})]
    for n, (op, ids) in enumerate(steps, start=1):
        model = history[-1][1]
        done = None  # the instant this step completed, if any
        if op == "insert":
            # Insert never looks keys up (as in Hudi): a key the table holds would be stored twice. Fresh keys only.
            rows = [(i, f"p{i % 2}", n, f"i{n}-{i}") for i in ids if i not in model]
            if not rows:
                continue
            done = table.insert(spark.createDataFrame(rows, SCHEMA)).instant_time
            history.append((done, {**model, **{r[0]: r[1:] for r in rows}}))
        elif op == "upsert":
            rows = [(i, f"p{i % 2}", n, f"v{n}-{i}") for i in ids]
            done = table.upsert(spark.createDataFrame(rows, SCHEMA)).instant_time
            history.append((done, {**model, **{r[0]: r[1:] for r in rows}}))
        elif op == "delete":
            if not table.timeline.completed_commits():
                continue  # nothing committed yet: hoodpy refuses a delete against a table with no data
            done = table.delete(spark.createDataFrame([(i, f"p{i % 2}") for i in ids], "id int, part string"))
            history.append((done.instant_time, {k: v for k, v in model.items() if k not in ids}))
        elif op == "crash":
            _crashing_upsert(table, spark.createDataFrame([(i, f"p{i % 2}", n, "lost") for i in ids], SCHEMA))
            assert table.timeline.pending_writes(), "the crashed write left its instant behind"
        elif op == "rollback":
            commits = table.timeline.completed_commits()
            if not commits or len(history) < 2:
                continue
            assert commits[-1].timestamp == history[-1][0], (commits[-1], history[-1][0])
            table.rollback_to_instant(commits[-1].timestamp)
            history.pop()
        elif op == "compact":
            if not mor:
                continue
            if table.timeline.pending_writes():
                # A crashed deltacommit before the plan: refused (its logs would miss the plan), table unchanged.
                before = table.timeline.instants
                with pytest.raises(CompactionError, match="still pending"):
                    table.compaction.schedule()
                assert table.timeline.instants == before
            else:
                plan = table.compaction.schedule()
                if plan is not None:
                    table.compaction.execute(plan)
                    history.append((plan.instant_time, model))
        elif op == "clean":
            table.cleaning.run(CLEAN)
        elif op == "cluster":
            for result in table.clustering.run(CLUSTER):
                history.append((result.instant_time, model))
        _check_step(table, path, mor, metadata, history[-1][1], (n, op, ids))
    # The next write cleans every leftover of crashed writes.
    table.upsert(spark.createDataFrame([(99, "p1", 999, "last")], SCHEMA))
    timeline = table.timeline
    assert timeline.pending_writes() == []
    # Every base and log file left on storage was written by a completed instant (named in its write stats).
    written = {s.path for i in timeline.completed_commits() for s in timeline.commit_metadata(i).write_stats}
    leftovers = {f.path for f in list_group_files(table.storage)} - written
    assert not leftovers, leftovers
    _check_step(table, path, mor, metadata, {**history[-1][1], 99: ("p1", 999, "last")}, "final write")


def _check_step(table, path: str, mor: bool, metadata: bool, expected: dict, where) -> None:
    assert _state(table.read()) == expected, where
    assert hudi_rs_rows(path, COLUMNS) == expected, where
    if mor:
        assert _state(table.read(query_type="read_optimized")) == \
            hudi_rs_rows(path, COLUMNS, {"hoodie.read.use.read_optimized.mode": "true"}), where
    if metadata and table.timeline.completed_commits():  # built by the first write that completes
        assert_metadata_in_step(table, COLUMNS)
