"""Clean execution and the time-travel retention check, without Spark."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InstantNotRetainedError, PlanNotFoundError
from hoodpy.services.clean.execute import execute_clean, load_clean_plan, read_clean_metadata
from hoodpy.services.clean.retention import check_retained
from hoodpy.services.clean.service import CleanService
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, instant_time_of
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

A, B = "aaaaaaaa-0000-0000-0000-000000000001-0", "bbbbbbbb-0000-0000-0000-000000000002-0"
RETAIN_2 = HoodieConfig.of({"hoodie.cleaner.commits.retained": "2"})


def t(n: int) -> str:
    """Instant n, in the future: a clean's new instant time then follows the latest commit, as in real use."""
    return instant_time_of(datetime(2030, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n))


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def write(storage, n, groups, *, action=Action.COMMIT, replaced=None):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), action))
    meta = CommitMetadata(OperationType.UPSERT, partition_to_replace_file_ids=replaced)
    for partition, fid in groups:
        path = f"{partition}/{fid}_0-1-1_{t(n)}.parquet"
        storage.write_bytes(path, b"x")
        meta.add_write_stat(WriteStat(fid, path, partition, num_writes=1))
    transitions.complete(storage, inflight, meta.to_json_bytes())


def five_commits(storage):
    write(storage, 1, [("p", A), ("q", B)])
    for n in range(2, 6):
        write(storage, n, [("p", A)])


def test_schedule_then_execute_records_hudi_metadata(storage):
    five_commits(storage)
    plan = CleanService.of(storage).schedule(RETAIN_2)
    requested = storage.read_bytes(f".hoodie/{plan.instant_time}.clean.requested")
    assert deserialize(AvroModel.CLEANER_PLAN, requested)["policy"] == "KEEP_LATEST_COMMITS"
    assert load_clean_plan(storage, plan.instant_time).files_per_partition == plan.files_per_partition
    result = execute_clean(storage, plan.instant_time)
    assert result.deleted_files == {"p": [f"p/{A}_0-1-1_{t(1)}.parquet", f"p/{A}_0-1-1_{t(2)}.parquet"]}
    # The inflight file holds the plan, as Hudi's does.
    assert storage.read_bytes(f".hoodie/{plan.instant_time}.clean.inflight") == requested
    meta = read_clean_metadata(storage, plan.instant_time)
    assert meta["version"] == 2 and meta["totalFilesDeleted"] == 2 and meta["earliestCommitToRetain"] == t(4)
    assert meta["partitionMetadata"]["p"]["successDeleteFiles"] == [f"{A}_0-1-1_{t(1)}.parquet",
                                                                    f"{A}_0-1-1_{t(2)}.parquet"]
    assert meta["partitionMetadata"]["p"]["policy"] == "KEEP_LATEST_COMMITS"
    assert meta["lastCompletedCommitTimestamp"] == t(5)
    with pytest.raises(PlanNotFoundError, match="already completed"):
        execute_clean(storage, plan.instant_time)


def test_nothing_to_clean_writes_no_instant(storage):
    five_commits(storage)
    assert CleanService.of(storage).schedule(HoodieConfig.of({"hoodie.cleaner.commits.retained": "10"})) is None
    assert [i for i in Timeline.load(storage).instants if i.action == Action.CLEAN] == []


def test_trigger_waits_for_max_commits(storage):
    five_commits(storage)
    config = RETAIN_2.with_options({"hoodie.clean.max.commits": "2"})
    assert CleanService.of(storage).run(config, trigger=True) is not None
    write(storage, 6, [("p", A)])
    assert CleanService.of(storage).run(config, trigger=True) is None  # one commit since the last clean
    write(storage, 7, [("p", A)])
    assert CleanService.of(storage).run(config, trigger=True).total_files_deleted == 2


def test_pending_clean_is_finished_first(storage):
    five_commits(storage)
    plan = CleanService.of(storage).schedule(RETAIN_2)
    transitions.transition_to_inflight(storage, transitions.Instant(plan.instant_time, Action.CLEAN,
                                                                    transitions.State.REQUESTED))
    storage.delete(f"p/{A}_0-1-1_{t(1)}.parquet")  # what a crashed execution already removed
    result = CleanService.of(storage).run(RETAIN_2)
    assert result.instant_time == plan.instant_time and result.total_files_deleted == 2
    assert [i.is_completed for i in Timeline.load(storage).instants if i.action == Action.CLEAN] == [True]


def test_time_travel_to_cleaned_instants_raises(storage):
    five_commits(storage)
    CleanService.of(storage).run(RETAIN_2)
    timeline = Timeline.load(storage)
    for n in (3, 4, 5):  # c3 is the version before the earliest retained c4: still whole
        check_retained(storage, timeline, t(n))
    for n in (1, 2):
        with pytest.raises(InstantNotRetainedError, match=t(n)):
            check_retained(storage, timeline, t(n))


def test_time_travel_before_a_replaced_group_was_cleaned(storage):
    write(storage, 1, [("p", A), ("p", B)])
    write(storage, 2, [("p", "cccccccc-0000-0000-0000-000000000003-0")], action=Action.REPLACECOMMIT,
          replaced={"p": [B]})
    for n in (3, 4):
        write(storage, n, [("p", A)])
    CleanService.of(storage).run(RETAIN_2)  # earliest retained c3: B (replaced at c2) goes
    timeline = Timeline.load(storage)
    check_retained(storage, timeline, t(2))  # B is replaced as of c2: nothing missing
    with pytest.raises(InstantNotRetainedError, match="bbbbbbbb"):
        check_retained(storage, timeline, t(1))


_KILLED_CLEANER = """
import os, signal, sys, threading
sys.path.insert(0, {repo!r})
from hoodpy.config import HoodieConfig
from hoodpy.services.clean.service import CleanService
from hoodpy.storage import Storage

real_delete = Storage.delete
first = threading.Lock()
def delete_then_die(self, rel):
    if rel.endswith(".parquet") and not first.acquire(blocking=False):
        threading.Event().wait()  # deletes run on a thread pool: the others wait for the kill
    real_delete(self, rel)
    if rel.endswith(".parquet"):
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies right after its first file delete
Storage.delete = delete_then_die
CleanService.of(Storage({path!r})).run(HoodieConfig.of({{"hoodie.cleaner.commits.retained": "2"}}))
"""


def test_cleaner_killed_mid_execution_leaves_a_clean_the_next_run_completes(storage, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    five_commits(storage)
    script = tmp_path / "killed_cleaner.py"
    script.write_text(_KILLED_CLEANER.format(repo=str(Path(__file__).resolve().parents[4]), path=storage.root))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    [pending] = [i for i in Timeline.load(storage).instants if i.action == Action.CLEAN]
    assert pending.is_inflight
    left = [f.path for f in storage.list_files("p")]
    assert len(left) == 4  # one of the two planned files is gone
    result = CleanService.of(storage).run(RETAIN_2)
    assert result.instant_time == pending.timestamp and result.total_files_deleted == 2
    assert sorted(f.path for f in storage.list_files("p")) == [f"p/{A}_0-1-1_{t(n)}.parquet" for n in (3, 4, 5)]
    assert [i.is_completed for i in Timeline.load(storage).instants if i.action == Action.CLEAN] == [True]


def test_two_processes_finishing_the_same_clean(storage, monkeypatch):
    five_commits(storage)
    plan = CleanService.of(storage).schedule(RETAIN_2)
    real_complete = transitions.complete

    def other_process_completes_first(st, inflight, data, **kwargs):
        real_complete(st, inflight, data, **kwargs)  # the other process
        return real_complete(st, inflight, data, **kwargs)  # ours: the instant is already completed

    monkeypatch.setattr(transitions, "complete", other_process_completes_first)
    result = execute_clean(storage, plan.instant_time)
    assert result.total_files_deleted == 2
    assert [i.is_completed for i in Timeline.load(storage).instants if i.action == Action.CLEAN] == [True]
