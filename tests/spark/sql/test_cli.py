"""The command line on a table hoodpy wrote (bulk insert, two upserts, a clean, a z-order clustering, another
upsert, then a pending clean and a pending clustering): its JSON equals the SQL procedures' rows, and its
pending plans, layout and picture describe what happened."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cli_procedures import assert_cli_matches_procedures, call_rows, cli_rows
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.inspect.column_layout import clustering_layouts
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, city string, ts long, x int, y int"
SIZING = {"hoodie.parquet.max.file.size": str(50 * 1024), "hoodie.copyonwrite.record.size.estimate": "1024"}
ROWS, PER_FILE = 400, 50  # max file size / record size estimate: 4 files per city


@pytest.fixture(scope="module")
def built(hoodpy_spark, tmp_path_factory):
    spark = hoodpy_spark
    rnd = random.Random(7)
    path = str(tmp_path_factory.mktemp("cli") / "points")
    t = HoodieTable.create(spark, path, table_name="points", record_key_fields=["id"], partition_fields=["city"],
                           precombine_field="ts")

    def rows(ids, ts):
        return spark.createDataFrame([(i, "ab"[i % 2], ts, rnd.randrange(1000), rnd.randrange(1000)) for i in ids],
                                     SCHEMA)

    c1 = t.bulk_insert(rows(range(ROWS), 1), options=SIZING).instant_time
    c2 = t.upsert(rows([*range(0, 60, 2), *range(ROWS, ROWS + 10)], 2)).instant_time
    c3 = t.upsert(rows(range(1, 40, 2), 3)).instant_time
    cleaned = t.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert cleaned is not None and cleaned.total_files_deleted > 0
    per_city: dict[str, int] = {}
    for bf in t.file_system_view().latest_base_files():
        per_city[bf.partition_path] = per_city.get(bf.partition_path, 0) + bf.size
    # Four output files per city: files of one size (their bloom filters) make ceil(city bytes / target) 4 for
    # both cities only with the target taken from the larger city.
    [clustered] = t.clustering.run(sort_columns="x,y", layout="z-order",
                                   options={ClusteringConfig.TARGET_FILE_MAX_BYTES.key: max(per_city.values()) // 4 + 1})
    c5 = t.upsert(rows([3, 4], 5)).instant_time
    pending_clean = t.cleaning.schedule({"hoodie.cleaner.commits.retained": "1"})
    pending_clustering = t.clustering.schedule(sort_columns="y")
    assert pending_clean is not None and pending_clustering is not None
    return {"table": t, "path": path, "commits": [c1, c2, c3, clustered.instant_time, c5], "clustered": clustered,
            "pending_clean": pending_clean.instant_time, "pending_clustering": pending_clustering.instant_time}


def test_every_command_prints_the_procedures_rows(hoodpy_spark, capsys, built):
    compared = assert_cli_matches_procedures(hoodpy_spark, capsys, built["path"], built["commits"][1])
    assert compared >= 12  # the table has commits, files, stats and clusterings: rows were compared
    c1, c2, c3, c4, c5 = built["commits"]
    commits = cli_rows(capsys, ["commits", built["path"]])
    assert [(r[0], r[2]) for r in commits] == [(c5, "commit"), (c4, "replacecommit"), (c3, "commit"),
                                               (c2, "commit"), (c1, "commit")]
    written = json.loads((Path(built["path"]) / ".hoodie" / f"{c1}.commit").read_text())["partitionToWriteStats"]
    files_written = sum(len(stats) for stats in written.values())
    assert commits[-1][7] == ROWS and commits[-1][4] == files_written >= ROWS // PER_FILE  # records, files
    assert commits[1][7] == ROWS + 10  # the clustering rewrote every row
    timeline = cli_rows(capsys, ["timeline", built["path"]])
    assert [(r[0], r[1], r[2]) for r in timeline[:2]] == [
        (built["pending_clustering"], "replacecommit", "REQUESTED"), (built["pending_clean"], "clean", "REQUESTED")]


def test_pending_plans(hoodpy_spark, capsys, built):
    path = built["path"]
    plans = cli_rows(capsys, ["clustering-plan", path])
    every = call_rows(hoodpy_spark, f"CALL show_clustering(path => '{path}', show_involved_partition => true)")
    assert plans == [r for r in every if r[2] != "COMPLETED"]
    assert [(r[0], r[2]) for r in plans] == [(built["pending_clustering"], "REQUESTED")]
    plan = built["table"].clustering.plan(built["pending_clustering"])
    slices = cli_rows(capsys, ["clustering-plan", path, "--slices", "--limit", "-1"])
    assert sorted((r[3], r[4]) for r in slices) == sorted(plan.file_group_ids)
    assert {r[7] for r in slices} == {"y"}

    [clean_plan] = built["table"].cleaning.pending()
    cleans = cli_rows(capsys, ["clean-plan", path])
    assert [(r[0], r[1], r[5], r[6]) for r in cleans] == [
        (built["pending_clean"], "REQUESTED", p, len(files))
        for p, files in sorted(clean_plan.files_per_partition.items())]
    # What it deletes: the file groups the clustering replaced, every version still on storage.
    files = cli_rows(capsys, ["clean-plan", path, "--files"])
    replaced = {fg for fg in built["clustered"].metadata.replaced_file_ids()}
    assert replaced and {(r[2], Path(r[3]).name.split("_")[0]) for r in files} == replaced


def _x_range(path: str, partition: str, file_id: str, instant: str) -> tuple[int, int]:
    [f] = (Path(path) / partition).glob(f"{file_id}_*_{instant}.parquet")
    xs = pq.read_table(f, columns=["x"]).column("x").to_pylist()
    return min(xs), max(xs)


def test_layout_shows_what_z_order_did(capsys, built, tmp_path):
    path = built["path"]
    _, _, c3, c4, _ = built["commits"]
    before, after = clustering_layouts(built["table"].storage, "x")
    assert (before.as_of, after.as_of) == (c3, c4)
    live_before = cli_rows(capsys, ["files", path, "--latest", "--max-instant", c3, "--limit", "-1"])
    assert sorted((f.partition_path, f.file_id) for f in before.files) == sorted((r[0], r[1]) for r in live_before)
    assert {f.base_instant for f in after.files} == {c4}
    assert len(after.files) == built["clustered"].output_file_groups
    for layout in (before, after):
        for f in layout.files:
            assert (f.min, f.max) == _x_range(path, f.partition_path, f.file_id, f.base_instant)
    # Random x in every input file: each range overlaps every other file of its partition. Z-order on (x, y)
    # cuts x into a few bands (each shared with the files of other y bands).
    per_partition = {p: sum(1 for f in before.files if f.partition_path == p) for p in ("a", "b")}
    assert before.mean_overlap == pytest.approx(sum(n * (n - 1) for n in per_partition.values()) / len(before.files))
    # Four files per city before (every pair overlapping: 3.0) and after; the bands are cut at sampled ranks, not
    # exactly at x's midpoint, so a band may reach into its neighbour's.
    assert after.mean_overlap < before.mean_overlap
    out = tmp_path / "zorder.png"
    capsys.readouterr()
    from hoodpy.cli import main

    assert main(["layout", path, "--column", "x", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"before {c4} (cluster)" in text and f"after {c4} (cluster)" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
