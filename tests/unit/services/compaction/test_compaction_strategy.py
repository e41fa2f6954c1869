"""Which file slices a compaction plan takes: Hudi's metrics, LogFileSizeBasedCompactionStrategy's order and
threshold, BoundedIOCompactionStrategy's budget, and the file groups left out."""

from __future__ import annotations

from hoodpy.config import HoodieConfig
from hoodpy.file_group.file_group import BaseFile, LogFile
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.services.compaction.strategy import order_and_filter, plan_operations, slice_metrics
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.timeline import Timeline

MB = 1024 * 1024
T1, T2, T3 = "20250101000000000", "20250102000000000", "20250103000000000"


def _base(partition: str, fid: str, size: int, t: str = T1) -> BaseFile:
    return BaseFile(partition, parse_base_file_name(f"{fid}_0-1-0_{t}.parquet"), size)


def _log(partition: str, fid: str, version: int, size: int, t: str = T1) -> LogFile:
    return LogFile(partition, parse_log_file_name(f".{fid}_{t}.log.{version}_0-{version}-0"), size)


def _view(bases, logs) -> FileSystemView:
    timeline = Timeline(None, [Instant(T1, Action.DELTACOMMIT, State.COMPLETED),
                               Instant(T2, Action.DELTACOMMIT, State.COMPLETED),
                               Instant(T3, Action.DELTACOMMIT, State.COMPLETED)])
    return FileSystemView(timeline, bases, log_files=logs)


def test_metrics_as_hudi_captures_them():
    view = _view([_base("p", "a-0", 3 * MB + 5)], [_log("p", "a-0", 1, MB), _log("p", "a-0", 2, MB // 2),
                                                   _log("p", "b-0", 1, 700, T2)])
    [a, b] = sorted(view.latest_file_slices(), key=lambda s: s.file_id)
    assert list(slice_metrics(a, 125829120).items()) == [  # the Avro map's order, as Java's HashMap iterates
        ("TOTAL_LOG_FILES", 2.0), ("TOTAL_IO_MB", 7.0), ("TOTAL_IO_READ_MB", 4.0),
        ("TOTAL_LOG_FILES_SIZE", float(MB + MB // 2)), ("TOTAL_IO_WRITE_MB", 3.0)]
    # Logs only: the write is a whole default-size base file (hoodie.parquet.max.file.size, 120 MB).
    assert slice_metrics(b, 125829120) == {"TOTAL_LOG_FILES": 1.0, "TOTAL_IO_MB": 120.0, "TOTAL_IO_READ_MB": 0.0,
                                            "TOTAL_LOG_FILES_SIZE": 700.0, "TOTAL_IO_WRITE_MB": 120.0}


def test_plan_takes_slices_with_logs_largest_logs_first():
    view = _view([_base("p", "a-0", MB), _base("p", "c-0", MB), _base("q", "d-0", MB)],
                 [_log("p", "a-0", 1, 100), _log("p", "a-0", 2, 50), _log("q", "d-0", 1, 400),
                  _log("p", "e-0", 1, 200, T2)])
    ops = plan_operations(view, set(), HoodieConfig.of({}))
    assert [(op.partition_path, op.file_id) for op in ops] == [("q", "d-0"), ("p", "e-0"), ("p", "a-0")]
    a = ops[2]
    assert a.data_file_name == "a-0_0-1-0_20250101000000000.parquet" and a.base_instant_time == T1
    assert a.delta_file_names == (".a-0_20250101000000000.log.1_0-1-0", ".a-0_20250101000000000.log.2_0-2-0")
    e = ops[1]
    assert e.data_file_name is None and e.base_instant_time == T2  # a group of logs only
    # File groups a pending compaction or clustering holds are left out; slices without logs never qualify.
    assert [op.file_id for op in plan_operations(view, {("q", "d-0"), ("p", "a-0")}, HoodieConfig.of({}))] == ["e-0"]
    # The threshold on the slice's total log size.
    threshold = HoodieConfig.of({"hoodie.compaction.logfile.size.threshold": 150})
    assert [op.file_id for op in plan_operations(view, set(), threshold)] == ["d-0", "e-0", "a-0"]
    threshold = HoodieConfig.of({"hoodie.compaction.logfile.size.threshold": 151})
    assert [op.file_id for op in plan_operations(view, set(), threshold)] == ["d-0", "e-0"]


def test_io_budget_takes_the_slice_that_exhausts_it():
    view = _view([_base("p", f"{c}-0", size * MB) for c, size in (("a", 10), ("b", 20), ("c", 30))],
                 [_log("p", f"{c}-0", 1, size) for c, size in (("a", 300), ("b", 200), ("c", 100))])
    ops = plan_operations(view, set(), HoodieConfig.of({}))
    assert [(op.file_id, op.metrics["TOTAL_IO_MB"]) for op in ops] == [("a-0", 20.0), ("b-0", 40.0), ("c-0", 60.0)]
    # 20 + 40 = 60 leaves 1 MB of 61, so c (60) is taken too and exhausts it; with 60, c is not needed.
    assert [op.file_id for op in order_and_filter(ops, HoodieConfig.of({"hoodie.compaction.target.io": 61}))] == \
        ["a-0", "b-0", "c-0"]
    assert [op.file_id for op in order_and_filter(ops, HoodieConfig.of({"hoodie.compaction.target.io": 60}))] == \
        ["a-0", "b-0"]
    assert [op.file_id for op in order_and_filter(ops, HoodieConfig.of({"hoodie.compaction.target.io": 1}))] == \
        ["a-0"]


def test_log_files_being_written_stay_out_of_the_plan():
    view = _view([_base("p", "a-0", MB), _base("q", "d-0", MB)],
                 [_log("p", "a-0", 1, 100), _log("p", "a-0", 2, 50), _log("q", "d-0", 1, 400)])
    writing = {"p/.a-0_20250101000000000.log.2_0-2-0", "q/.d-0_20250101000000000.log.1_0-1-0"}
    ops = plan_operations(view, set(), HoodieConfig.of({}), being_written=writing)
    # A pending write's logs may fail (and be removed) or complete after the plan: neither may be compacted.
    assert [(op.file_id, op.delta_file_names) for op in ops] == [("a-0", (".a-0_20250101000000000.log.1_0-1-0",))]
    assert ops[0].metrics["TOTAL_LOG_FILES"] == 1.0
