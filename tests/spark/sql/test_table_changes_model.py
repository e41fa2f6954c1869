"""``hudi_table_changes`` on randomized write sequences (upserts, deletes, insert_overwrite, clustering, cleans),
checked on every window against an in-memory model of the table's history and against hudi-rs's incremental
read.

The model keeps the table's rows (value and commit time per key) after each commit; the changes in (s, e]
are the rows of the state at e whose commit time is in (s, e] (Hudi's ``latest_state``). A window whose
file versions a clean removed is refused (ChangesNotReadableError); the test then checks the refusal's
claim: the window from the earliest readable start it names reads the model's rows, and Hudi's full-scan
fallback returns the latest snapshot's rows committed in the window. hudi-rs reads such a window without an
error but misses the cleaned versions' rows, so it is compared on the windows hoodpy reads.
CI runs a few derandomized sequences; the `slow` tier many more.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hoodpy.errors import ChangesNotReadableError
from hoodpy.meta_fields import COMMIT_TIME
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs
from tests.spark.hoodpy_spark_helpers import sequences

pytestmark = pytest.mark.spark

SCHEMA = "id int, part string, ts long, val string"
EARLIEST = "0" * 17
FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy",
           "hoodie.clean.automatic": "false", "hoodie.parquet.small.file.limit": "0"}
CLEANS = {"versions": {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"},
          "commits": {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "1"}}

keys = st.lists(st.integers(min_value=0, max_value=7), min_size=1, max_size=4, unique=True)
step = st.one_of(
    st.tuples(st.just("upsert"), keys),
    st.tuples(st.just("delete"), keys),
    st.tuples(st.just("overwrite"), keys),
    st.tuples(st.just("cluster"), st.just(None)),
    st.tuples(st.just("clean"), st.sampled_from(sorted(CLEANS))),
)


@sequences(3)
@given(steps=st.lists(step, min_size=2, max_size=4))
# Cleaned windows for certain: the first versions of both file groups are cleaned, then a clustering.
@example(steps=[("upsert", [0, 2]), ("delete", [1]), ("clean", "versions"), ("cluster", None)])
def test_every_window_agrees_with_the_model_and_hudi_rs(hoodpy_spark, database, tmp_path_factory, steps):
    _check(hoodpy_spark, database, tmp_path_factory, [("upsert", [0, 1, 2, 3])] + steps)


@pytest.mark.slow
@sequences(30)
@given(steps=st.lists(step, min_size=4, max_size=8))
def test_many_sequences_every_window_agrees(hoodpy_spark, database, tmp_path_factory, steps):
    _check(hoodpy_spark, database, tmp_path_factory, [("upsert", [0, 1, 2, 3])] + steps)


_names = itertools.count(1)


def _check(spark, database, tmp_path_factory, steps) -> None:
    path = str(tmp_path_factory.mktemp("changes_model") / "t")
    table = HoodieTable.create(spark, path, table_name="changes_model", record_key_fields=["id"],
                               partition_fields=["part"], precombine_field="ts", options=OPTIONS)
    name = f"{database}.changes_model_{next(_names)}"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    state: dict[int, tuple[str, str, str]] = {}  # id -> (part, val, commit time)
    history: dict[str, dict] = {}  # commit (write) instant -> state after it
    for n, (op, arg) in enumerate(steps, start=1):
        rows = [(k, f"p{k % 2}", n, f"{op[0]}{n}-{k}") for k in arg] if isinstance(arg, list) else []
        if op == "upsert":
            c = table.upsert(spark.createDataFrame(rows, SCHEMA), options=OPTIONS).instant_time
            state = {**state, **{k: (p, v, c) for k, p, _, v in rows}}
        elif op == "delete":
            c = table.delete(spark.createDataFrame([r[:2] for r in rows], "id int, part string"),
                             options=OPTIONS).instant_time
            state = {k: v for k, v in state.items() if k not in arg}
        elif op == "overwrite":
            c = table.insert_overwrite(spark.createDataFrame(rows, SCHEMA), options=OPTIONS).instant_time
            parts = {p for _, p, _, _ in rows}
            state = {**{k: v for k, v in state.items() if v[0] not in parts}, **{k: (p, v, c) for k, p, _, v in rows}}
        elif op == "cluster":
            done = table.clustering.run(OPTIONS, sort_columns="id")
            if not done:
                continue
            c = done[-1].instant_time  # rows keep their commit times
        else:
            table.cleaning.run({**OPTIONS, **CLEANS[arg]})
            continue
        history[c] = state
    refused = _check_windows(spark, table, name, history)
    if steps[1:3] == [("upsert", [0, 2]), ("delete", [1])]:  # the explicit example: cleaned windows refused
        assert refused


def _model(history: dict[str, dict], start: str, end: str, *, latest: bool = False) -> set[tuple]:
    """(id, val, commit time) of the changes in (start, end]: the state at end (Hudi's fallback: the latest
    state) restricted to rows committed in the window."""
    state = history[max(history)] if latest else history[end]
    return {(k, v, c) for k, (_, v, c) in state.items() if start < c <= end}


def _check_windows(spark, table, name, history) -> int:
    """Every window (s, e] of the history; returns how many were refused. All reads are planned one call each
    (a refusal is raised then), then run as one Spark job (a union labelled by read): CI stays fast."""
    from functools import reduce

    from pyspark.sql import functions as F

    fallback_table = HoodieTable.for_path(spark, table.base_path, options={FALLBACK: "true"})
    reads: list[tuple[str, str, str]] = []  # (kind, start, end) per label
    frames = []

    def plan(kind: str, start: str, end: str, df) -> None:
        frames.append(df.withColumn("__read", F.lit(len(reads))))
        reads.append((kind, start, end))

    for start, end in itertools.combinations([EARLIEST, *sorted(history)], 2):
        call = f"SELECT * FROM hudi_table_changes('{name}', 'latest_state', '{start}', '{end}')"
        try:
            plan("window", start, end, spark.sql(call))
        except ChangesNotReadableError as refused:
            readable = refused.earliest_start
            assert readable is not None and start < readable <= end, (start, end, readable)
            plan("readable", readable, end, table.read_incremental(readable, end))
            plan("fallback", start, end, fallback_table.read_incremental(start, end))
    rows: dict[int, list[dict]] = {i: [] for i in range(len(reads))}
    for row in reduce(lambda a, b: a.unionByName(b), frames).toArrow().to_pylist():
        rows[row.pop("__read")].append(row)
    for i, (kind, start, end) in enumerate(reads):
        ours = hudi_rs.sort_rows(hudi_rs.normalize(rows[i]))
        got = {(r["id"], r["val"], r[COMMIT_TIME]) for r in ours}
        assert got == _model(history, start, end, latest=kind == "fallback"), (kind, start, end)
        if kind != "fallback":
            assert ours == hudi_rs.incremental(table.base_path, start, end), (kind, start, end)
    return sum(kind == "fallback" for kind, _, _ in reads)
