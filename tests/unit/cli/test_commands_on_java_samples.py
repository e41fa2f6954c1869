"""The command line on the Java-written sample tables, without Spark: each command's rows against what the
table's own files say (commit JSON, the storage listing, parquet data, Avro plans read with fastavro)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

from java_samples import REPO, unzip_sample
from hoodpy.cli import main
from hoodpy.cli.output import Result, print_table
from hoodpy.config import HoodieConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.inspect.column_layout import clustering_layouts
from hoodpy.inspect.rows import columns, make_rows
from hoodpy.services.clean.service import CleanService
from hoodpy.services.table_service import ServiceContext
from hoodpy.services.clustering.strategy import plan_clustering
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, serialize
from hoodpy.timeline.instant import Action, new_instant_time
from hoodpy.timeline.timeline import Timeline

OVERWRITE = "v6_simplekeygen_nonhivestyle_overwritetable"  # c1, c2 commits, c3 insert_overwrite_table
C1, C2, C3 = "20240707001301554", "20240707001302376", "20240707001303088"


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli_samples")


@pytest.fixture(scope="module")
def overwrite(samples) -> Path:
    return unzip_sample(OVERWRITE, samples)


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def commit_json(path: Path, instant: str, action: str) -> dict:
    return json.loads((path / ".hoodie" / f"{instant}.{action}").read_text())


def parquet_files(path: Path) -> list[tuple[str, str, str, int]]:
    """(partition, file id, instant, size) of every base file on disk."""
    out = []
    for f in path.rglob("*.parquet"):
        if ".hoodie" in f.parts:
            continue
        out.append((str(f.parent.relative_to(path)), f.name.split("_")[0], f.name.rsplit("_", 1)[1][:-8],
                    f.stat().st_size))
    return sorted(out)


# -- commits, timeline -------------------------------------------------------------------------------------
def test_commits(capsys, overwrite):
    rows = run_json(capsys, "commits", str(overwrite))
    assert [(r["commit_time"], r["action"]) for r in rows] == [(C3, "replacecommit"), (C2, "commit"), (C1, "commit")]
    for r in rows:
        stats = [s for ss in commit_json(overwrite, r["commit_time"], r["action"])["partitionToWriteStats"].values()
                 for s in ss]
        assert r["total_bytes_written"] == sum(s["totalWriteBytes"] for s in stats)
        assert r["total_records_written"] == sum(s["numWrites"] for s in stats)
        assert r["total_update_records_written"] == sum(s["numUpdateWrites"] for s in stats)
        assert r["total_files_added"] == sum(1 for s in stats if s["prevCommit"] == "null")
        assert r["total_files_added"] + r["total_files_updated"] == len(stats)
        assert len(r["state_transition_time"]) == 17
    assert run_json(capsys, "commits", str(overwrite), "--limit", "1") == rows[:1]


def test_commit_files_and_one_commit_in_detail(capsys, overwrite):
    files = run_json(capsys, "commits", str(overwrite), "--files")
    assert [(r["commit_time"], r["partition"]) for r in files] == [(C3, "30"), (C2, "30"), (C2, "10"), (C1, "20"),
                                                                   (C1, "10")]
    detail = run_json(capsys, "commits", str(overwrite), "--instant", C2)
    assert set(detail) == {"partitions", "files", "write_stats"}
    stats = commit_json(overwrite, C2, "commit")["partitionToWriteStats"]
    assert {r["partition_path"]: r["total_bytes_written"] for r in detail["partitions"]} == \
        {p: sum(s["totalWriteBytes"] for s in ss) for p, ss in stats.items()}
    [ws] = detail["write_stats"]
    assert ws["total_records_written"] == 3 and ws["avg_record_size"] == -(-ws["total_bytes_written"] // 3)


def test_timeline(capsys, overwrite):
    rows = run_json(capsys, "timeline", str(overwrite))
    assert [(r["instant_time"], r["action"], r["state"], r["timeline_type"]) for r in rows] == [
        (C3, "replacecommit", "COMPLETED", "ACTIVE"), (C2, "commit", "COMPLETED", "ACTIVE"),
        (C1, "commit", "COMPLETED", "ACTIVE")]
    assert all(r["requested_time"] and r["inflight_time"] and r["completed_time"] for r in rows)
    ranged = run_json(capsys, "timeline", str(overwrite), "--start", C2, "--end", "2024-07-07", "--limit", "1")
    assert [r["instant_time"] for r in ranged] == [C3, C2]  # both bounds: no limit


# -- files, stats ------------------------------------------------------------------------------------------
def test_files_leave_out_replaced_file_groups(capsys, overwrite):
    replaced = {(p, f) for p, ids in commit_json(overwrite, C3, "replacecommit")["partitionToReplaceFileIds"].items()
                for f in ids}
    on_disk = parquet_files(overwrite)
    live = [f for f in on_disk if (f[0], f[1]) not in replaced]
    assert len(on_disk) == 5 and len(live) == 1  # insert_overwrite_table replaced every earlier file group
    rows = run_json(capsys, "files", str(overwrite), "--limit", "-1")
    assert [(r["partition"], r["file_id"], r["base_instant"], r["data_file_size"]) for r in rows] == live
    assert rows[0]["data_file"] == f"{overwrite}/30/{next((overwrite / '30').glob(f'*{C3}.parquet')).name}"
    # As of the second commit: both versions of the group in partition 10, and the groups of 20 and 30.
    before = run_json(capsys, "files", str(overwrite), "--max-instant", C2, "--include-max", "--limit", "-1")
    assert sorted((r["partition"], r["file_id"], r["base_instant"], r["data_file_size"]) for r in before) == \
        [f for f in on_disk if f[2] <= C2]
    latest = run_json(capsys, "files", str(overwrite), "--latest", "--max-instant", C2, "--include-max")
    assert sorted((r["partition"], r["base_instant"]) for r in latest) == [("10", C2), ("20", C1), ("30", C2)]


def test_stats(capsys, overwrite):
    result = run_json(capsys, "stats", str(overwrite))
    on_disk = parquet_files(overwrite)
    sizes = {r["commit_time"]: r for r in result["file_sizes"]}
    assert set(sizes) == {C1, C2, C3, "ALL"}
    every = sizes["ALL"]
    assert (every["num_files"], every["min"], every["max"]) == (5, min(f[3] for f in on_disk),
                                                                max(f[3] for f in on_disk))
    assert every["avg"] == pytest.approx(sum(f[3] for f in on_disk) / 5)
    assert [sizes[t]["num_files"] for t in (C1, C2, C3)] == [2, 2, 1]
    assert result["write_amplification"] == [
        {"commit_time": C1, "total_upserted": 0, "total_written": 3, "write_amplification_factor": "0"},
        {"commit_time": C2, "total_upserted": 1, "total_written": 3, "write_amplification_factor": "3.00"},
        {"commit_time": C3, "total_upserted": 0, "total_written": 1, "write_amplification_factor": "0"},
        {"commit_time": "Total", "total_upserted": 1, "total_written": 7, "write_amplification_factor": "7.00"},
    ]


# -- pending plans ------------------------------------------------------------------------------------------
def test_no_pending_plans(capsys, overwrite):
    assert run_json(capsys, "clean-plan", str(overwrite)) == []
    assert run_json(capsys, "clustering-plan", str(overwrite)) == []
    assert run_json(capsys, "clustering-plan", str(overwrite), "--all") == []  # insert_overwrite is no clustering


def test_pending_clean_plan(capsys, samples, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(unzip_sample(OVERWRITE, samples), path)
    storage = Storage(str(path))
    config = HoodieConfig.of(load_table_properties(storage), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                                              "hoodie.cleaner.fileversions.retained": "1"})
    plan = CleanService(ServiceContext(storage, config)).schedule()
    assert plan is not None
    with open(path / ".hoodie" / f"{plan.instant_time}.clean.requested", "rb") as f:
        written = next(fastavro.reader(f))  # the Avro plan, read without hoodpy
    expected = {p: [i["filePath"] for i in infos] for p, infos in written["filePathsToBeDeletedPerPartition"].items()
                if infos}
    # Every file group the insert_overwrite_table replaced goes: four files in partitions 10, 20, 30.
    assert sorted((p, len(files)) for p, files in expected.items()) == [("10", 2), ("20", 1), ("30", 1)]
    rows = run_json(capsys, "clean-plan", str(path))
    assert [(r["clean_time"], r["state"], r["partition_path"], r["files_to_delete"]) for r in rows] == \
        [(plan.instant_time, "REQUESTED", p, len(files)) for p, files in sorted(expected.items())]
    assert {(r["policy"], r["earliest_commit_to_retain"]) for r in rows} == {("KEEP_LATEST_FILE_VERSIONS", "")}
    assert written["policy"] == "KEEP_LATEST_FILE_VERSIONS" and written["earliestInstantToRetain"] is None
    files = run_json(capsys, "clean-plan", str(path), "--files")
    assert sorted(f"{path}/{r['file_path']}" for r in files) == sorted(p for ps in expected.values() for p in ps)


def test_pending_clustering_plan(capsys, samples, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(unzip_sample("v6_complexkeygen_hivestyle", samples), path)
    storage = Storage(str(path))
    timeline = Timeline.load(storage)
    config = HoodieConfig.of(load_table_properties(storage), {"hoodie.clustering.plan.strategy.sort.columns": "id"})
    plan = plan_clustering(timeline, FileSystemView.load(storage, timeline), config)
    t = new_instant_time(after=timeline.latest_instant_time())
    transitions.create_requested(storage, t, Action.REPLACECOMMIT, serialize(
        AvroModel.REQUESTED_REPLACE_METADATA, replace(plan, instant_time=t).requested_metadata()))
    live = {(p, f) for p, f, _, _ in parquet_files(path)}  # no replacecommit: every group is live
    rows = run_json(capsys, "clustering-plan", str(path))
    partitions = sorted({p for p, _ in live})
    assert rows == [{"timestamp": t, "input_group_size": len(partitions), "state": "REQUESTED",
                     "involved_partitions": ",".join(partitions)}]
    slices = run_json(capsys, "clustering-plan", str(path), "--slices")
    assert {(r["partition_path"], r["file_id"]) for r in slices} == live
    assert {(r["state"], r["sort_columns"]) for r in slices} == {("REQUESTED", "id")}


# -- layout --------------------------------------------------------------------------------------------------
def _id_range(path: Path, partition: str, file_id: str, instant: str) -> tuple[int, int]:
    [f] = (path / partition).glob(f"{file_id}_*_{instant}.parquet")
    ids = pq.read_table(f, columns=["id"]).column("id").to_pylist()
    return min(ids), max(ids)


def test_layout_before_and_after_the_last_replacecommit(capsys, overwrite, tmp_path):
    layouts = clustering_layouts(Storage(str(overwrite)), "id")
    before, after = layouts
    assert (before.as_of, after.as_of) == (C2, C3)
    assert sorted((f.partition_path, f.base_instant) for f in before.files) == [("10", C2), ("20", C1), ("30", C2)]
    assert [(f.partition_path, f.base_instant) for f in after.files] == [("30", C3)]
    for layout in layouts:
        for f in layout.files:
            assert (f.min, f.max) == _id_range(overwrite, f.partition_path, f.file_id, f.base_instant)
        assert [(f.partition_path, f.min) for f in layout.files] == sorted((f.partition_path, f.min)
                                                                           for f in layout.files)
    assert before.mean_overlap == after.mean_overlap == 0.0  # one file per partition
    out = tmp_path / "layout.png"
    result = run_json(capsys, "layout", str(overwrite), "--column", "id", "--out", str(out))
    assert [v["view"] for v in result["views"]] == [before.label, after.label]
    assert [len(v["files"]) for v in result["views"]] == [3, 1]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    height, width, _ = matplotlib.image.imread(out).shape
    assert width > height > 100


def test_layout_without_a_replacecommit_and_with_before(capsys, samples, tmp_path):
    path = unzip_sample("v6_nonpartitioned", samples)
    [only] = clustering_layouts(Storage(str(path)), "id")
    assert only.as_of is None and len(only.files) == 1
    first = sorted(p.name for p in (path / ".hoodie").glob("*.commit"))[0].split(".")[0]
    before, latest = clustering_layouts(Storage(str(path)), "id", before=first)
    assert before.as_of == first and [f.base_instant for f in before.files] == [first]
    assert latest.files[0].base_instant > first
    assert main(["layout", str(path), "--column", "id", "--out", str(tmp_path / "one.png")]) == 0
    assert "mean_overlap" in capsys.readouterr().out and (tmp_path / "one.png").stat().st_size > 1000


def test_layout_names_a_missing_matplotlib(capsys, overwrite, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails as if not installed
    assert main(["layout", str(overwrite), "--column", "id", "--out", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert "needs the Python package 'matplotlib'" in err and "pip install matplotlib" in err
    assert not (tmp_path / "x.png").exists()


def test_layout_unknown_column(capsys, overwrite, tmp_path):
    assert main(["layout", str(overwrite), "--column", "idd", "--out", str(tmp_path / "x.png")]) == 1
    assert "No column 'idd' in the base files (did you mean 'id'?)" in capsys.readouterr().err


# -- readable output, errors, no Spark ------------------------------------------------------------------------
def test_tables_are_readable(capsys, overwrite):
    assert main(["stats", str(overwrite)]) == 0
    out = capsys.readouterr().out
    assert "Base file sizes in bytes" in out and "write_amplification_factor" in out
    assert f"{min(f[3] for f in parquet_files(overwrite)):,}" in out  # sizes with thousands separators
    assert main(["files", str(overwrite)]) == 0
    out = capsys.readouterr().out
    assert f"30/{next((overwrite / '30').glob(f'*{C3}.parquet')).name}" in out and str(overwrite) not in out


def _run_module(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", code] if code else [sys.executable, "-m", "hoodpy", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def test_not_a_table_exits_2_without_a_traceback(tmp_path):
    proc = _run_module("commits", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"hoodpy commits: error: No hoodpy/Hudi table at '{tmp_path}': " \
                                  "no .hoodie/hoodie.properties found"
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_unsupported_table_version_exits_2(samples, tmp_path):
    path = tmp_path / "v8"
    shutil.copytree(unzip_sample("v6_empty", samples), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=6", "hoodie.table.version=8"))
    proc = _run_module("timeline", str(path))
    assert proc.returncode == 2 and "table version 8" in proc.stderr and "Traceback" not in proc.stderr


def test_empty_table(capsys, samples):
    path = unzip_sample("v6_empty", samples)
    assert run_json(capsys, "commits", str(path)) == []
    assert run_json(capsys, "files", str(path), "--latest") == []
    assert run_json(capsys, "stats", str(path))["file_sizes"] == [
        {"commit_time": "ALL", "min": 0, "10th": 0.0, "50th": 0.0, "avg": 0.0, "95th": 0.0, "max": 0, "num_files": 0,
         "std_dev": 0.0}]


def test_the_command_line_never_imports_spark(overwrite, tmp_path):
    code = (
        "import sys\nimport hoodpy.cli\n"
        "assert 'pyspark' not in sys.modules and 'matplotlib' not in sys.modules, 'import'\n"
        "from hoodpy.cli import main\n"
        f"for argv in (['commits'], ['commits', '--files'], ['timeline', '--archived'], ['files', '--latest'],\n"
        f"             ['stats'], ['clean-plan'], ['clustering-plan', '--all'],\n"
        f"             ['layout', '--column', 'id', '--out', {str(tmp_path / 'l.png')!r}]):\n"
        f"    assert main([argv[0], {str(overwrite)!r}, *argv[1:], '--json']) == 0, argv\n"
        "assert 'pyspark' not in sys.modules, 'run'\n"
    )
    proc = _run_module(code=code)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_python_dash_m_and_help():
    proc = _run_module("--help")
    assert proc.returncode == 0
    for command in ("commits", "timeline", "files", "stats", "clean-plan", "clustering-plan", "layout"):
        assert command in proc.stdout
    assert _run_module("commits").returncode == 2  # argparse: the path is required


def test_values_print_verbatim():
    """Rows are data: square brackets and colons in them are not rich markup or emoji codes."""
    out = io.StringIO()
    print_table(Result("r", "[bold]title[/bold]", make_rows(columns(("partition", "string"), ("n", "long")),
                                                             [("city=[sf]:smile:", 1234567)])), out)
    text = out.getvalue()
    assert "[bold]title[/bold]" in text and "city=[sf]:smile:" in text and "1,234,567" in text
