"""Groups rewritten in one Python task (group_rewrite.py): the distributed path's rows, cut into as many files,
each a contiguous stretch of the layout's order. The task samples its group from the rows it holds (the
distributed path through Spark), so the cuts may fall elsewhere; the unit module test_group_rewrite_files.py
pins the files for a given sample row for row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.config.clustering import ClusteringConfig
from hoodpy.file_group.naming import parse_base_file_name
from hoodpy.meta_fields import FILE_NAME, RECORD_KEY
from hoodpy.services.clustering import layout as lay
from tests.spark.clustering.test_execute_clustering import _cluster_copy, make_table

pytestmark = pytest.mark.spark


def _files(t) -> dict[str, list[list[tuple]]]:
    """Per partition, each output file's rows in file order (file name column left out), files ordered by
    their first row; and the write token of every file."""
    out: dict[str, list[list[tuple]]] = {}
    for bf in t.file_system_view().latest_base_files():
        table = pq.read_table(t.storage.full_path(bf.path))
        assert set(table.column(FILE_NAME).to_pylist()) == {bf.file_name}
        rows = [tuple(r.values()) for r in table.drop_columns([FILE_NAME]).to_pylist()]
        out.setdefault(bf.partition_path, []).append(rows)
    return {p: sorted(files) for p, files in out.items()}


def _tokens(t) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for bf in t.file_system_view().latest_base_files():
        out.setdefault(bf.partition_path, set()).add(parse_base_file_name(bf.file_name).write_token)
    return out


@pytest.mark.parametrize("layout, method", [("linear", "SAMPLE"), ("z-order", "SAMPLE"), ("hilbert", "DIRECT")])
def test_in_task_rewrite_writes_the_distributed_paths_files(spark, tmp_path, layout, method):
    base = make_table(spark, tmp_path / "base", batches=2, rows=800, rows_per_file=100)
    sizes = {}
    for bf in base.file_system_view().latest_base_files():
        sizes[bf.partition_path] = sizes.get(bf.partition_path, 0) + bf.size
    common = {ClusteringConfig.SORT_COLUMNS.key: "x,y", ClusteringConfig.TARGET_FILE_MAX_BYTES.key:
              max(sizes.values()) // 3 + 1, "hoodie.layout.optimize.strategy": layout,
              ClusteringConfig.CURVE_BUILD_METHOD.key: method}
    in_task = _cluster_copy(spark, tmp_path / "base", tmp_path / "in_task", common)
    shuffled = _cluster_copy(spark, tmp_path / "base", tmp_path / "shuffled",
                             {**common, ClusteringConfig.GROUP_TASK_MAX_BYTES.key: 0})
    files, reference = _files(in_task), _files(shuffled)
    assert set(files) == set(reference) == {"p0", "p1"}
    for p in files:
        assert sorted(r for f in files[p] for r in f) == sorted(r for f in reference[p] for r in f)
        assert len(files[p]) == len(reference[p]) >= 2
    assert sum(len(rows) for f in files.values() for rows in f) == 1600
    if method == "DIRECT" or layout == "linear":  # the order needs no sample: check the cuts follow it
        strategy = {"linear": lay.LINEAR, "hilbert": lay.HILBERT}[layout]
        spec = lay.LayoutSpec(strategy, ("x", "y"), lay.DIRECT, None, RECORD_KEY)
        for t in (in_task, shuffled):
            _assert_contiguous_stretches(t, spec)
    # One task wrote each group's files: one write token per partition, a different one per partition.
    tokens = _tokens(in_task)
    assert all(len(t) == 1 for t in tokens.values()) and tokens["p0"] != tokens["p1"]


def _assert_contiguous_stretches(t, spec) -> None:
    """Every file's rows in the layout's order, and the files one after another along it."""
    for p in ("p0", "p1"):
        spans = []
        for bf in t.file_system_view().latest_base_files():
            if bf.partition_path != p:
                continue
            table = pq.read_table(t.storage.full_path(bf.path))
            order = lay.order_indices(lay.sort_keys(table, spec))
            assert np.array_equal(order, np.arange(table.num_rows))
            keys = lay.sort_keys(table, spec)
            spans.append((keys.slice(0, 1), keys.slice(table.num_rows - 1, 1)))
        ends = pa.concat_tables([e for s in spans for e in s])
        assert np.array_equal(np.sort(lay.order_indices(ends)[::2]), np.arange(0, len(spans) * 2, 2))
        ranked = lay.order_indices(ends).tolist()
        assert all(ranked[i] + 1 == ranked[i + 1] for i in range(0, len(ranked), 2))  # a file's ends adjacent
