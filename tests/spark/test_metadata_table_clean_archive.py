"""The metadata table's cleaner and archival leave the timeline Java's would: every clean is a ``clean`` instant
(requested and inflight holding the HoodieCleanerPlan, completed holding the HoodieCleanMetadata of exactly the
files gone), run in Java's order (clean, then compaction, then the deltacommit of the write) and only once three
instants completed after the latest compaction; old instants are archived (version 6: an archive log file;
version 9: the LSM history) no further than the data table's active timeline, the last clean's earliest retained
instant and the latest compaction. Through it all the listing equals storage's (validate_metadata_table_files)
and hudi-rs reads the same rows with and without the metadata table."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_metadata_table_services import ALL, Model, make_table
from test_metadata_table_sync import assert_in_step

from hoodpy.config.properties import load_table_properties
from hoodpy.metadata_table import cleaner
from hoodpy.metadata_table.cleaner import CLEAN_SUFFIX
from hoodpy.metadata_table.layout import metadata_storage
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.timeline.archived import archived_instants
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.history import history_folder, read_history
from hoodpy.timeline.instant import LAYOUT_2, Action, State, parse_instant_file_name, timeline_folder
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

OPTIONS = {**ALL, "hoodie.metadata.compact.max.delta.commits": "3",
           "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
           "hoodie.metadata.keep.min.commits": "2", "hoodie.metadata.keep.max.commits": "3"}


def state_files(meta: Storage, layout: int) -> dict[tuple[str, str], set[str]]:
    """(instant time, action) -> the states present as files on the metadata table's active timeline."""
    out: dict[tuple[str, str], set[str]] = {}
    for f in meta.list_files(timeline_folder(layout)):
        i = parse_instant_file_name(f.path.rsplit("/", 1)[-1], layout)
        if i is not None:
            out.setdefault((i.timestamp, i.action.value), set()).add(i.state.value.lower())
    return out


def archived_times(meta: Storage, layout: int) -> dict[tuple[str, str], str]:
    """(instant time, action) -> completion time of the archived instants of the metadata table."""
    if layout == LAYOUT_2:
        return {(h.instant_time, h.action): h.completion_time or h.instant_time
                for h in read_history(meta, history_folder(load_table_properties(meta)), with_metadata=False)}
    return {(i.timestamp, i.action.value): i.timestamp for i in archived_instants(meta)}


def assert_cleans_as_java(path: str) -> list[str]:
    """Every completed clean of the metadata table: three state files, its plan and metadata name the same
    files, none of which is left; in version 6 at the latest deltacommit before it plus 002, after three
    completed instants past the compaction before it. Returns the clean instants."""
    meta = metadata_storage(Storage(path))
    mdt = MetadataTable(Storage(path))
    layout = mdt.layout
    states = state_files(meta, layout)
    cleans = [i for i in mdt.timeline.filter(actions=[Action.CLEAN])]
    for clean in cleans:
        assert clean.state == State.COMPLETED
        assert states[(clean.timestamp, "clean")] == {"requested", "inflight", "completed"}
        plan = deserialize(AvroModel.CLEANER_PLAN, meta.read_bytes(clean.with_state(State.REQUESTED).path))
        assert meta.read_bytes(clean.with_state(State.INFLIGHT).path) == meta.read_bytes(
            clean.with_state(State.REQUESTED).path)
        assert plan["policy"] == "KEEP_LATEST_COMMITS" and plan["version"] == 2
        earliest = plan["earliestInstantToRetain"]
        assert earliest["state"] == "COMPLETED" and earliest["action"] in ("deltacommit", "commit")
        planned = {p: sorted(f["filePath"] for f in files)
                   for p, files in plan["filePathsToBeDeletedPerPartition"].items()}
        assert planned and all(f.startswith(meta.root + "/") for files in planned.values() for f in files)
        done = deserialize(AvroModel.CLEAN_METADATA, meta.read_bytes(
            next(i for i in mdt.timeline.instants if i.timestamp == clean.timestamp).path))
        assert done["earliestCommitToRetain"] == earliest["timestamp"]
        assert done["totalFilesDeleted"] == sum(len(v) for v in planned.values())
        for partition, files in planned.items():
            pm = done["partitionMetadata"][partition]
            assert sorted(pm["successDeleteFiles"]) == sorted(f.rsplit("/", 1)[-1] for f in files)
            assert pm["failedDeleteFiles"] == [] and pm["policy"] == "KEEP_LATEST_COMMITS"
            assert not any(Path(f).exists() for f in files)
        # What had completed before it was planned, archived since or not (version 6 has no completion times:
        # the compaction t001 of the same write runs after the clean t002).
        completed = {**archived_times(meta, layout),
                     **{(i.timestamp, i.action.value): i.completed_at for i in mdt.timeline.instants if i.is_completed}}
        before = sorted((t, a) for (t, a), done in completed.items() if done < clean.timestamp
                        and (layout == LAYOUT_2 or t != clean.timestamp[:-len(CLEAN_SUFFIX)] + "001"))
        compactions = [t for t, a in before if a == "commit"]
        if layout != LAYOUT_2:
            assert clean.timestamp == max(t for t, a in before if a == "deltacommit") + CLEAN_SUFFIX
        if compactions:
            assert sum(t > compactions[-1] for t, _ in before) >= 3
    return [c.timestamp for c in cleans]


@pytest.mark.parametrize("version", ["6", "9"])
def test_metadata_table_cleans_and_archival_leave_a_timeline_as_java_does(spark, tmp_path, version):
    path = str(tmp_path / "t")
    model = Model(spark, make_table(spark, path, {**OPTIONS, "hoodie.write.table.version": version}))
    for round_ in range(9):
        model.upsert([(round_ % 3, "ab"[round_ % 3 % 2], round_, f"v{round_}"), (10 + round_, "a", round_, "n")])
        if round_ in (3, 8):
            model.check()
    meta = metadata_storage(Storage(path))
    mdt = MetadataTable(Storage(path))
    layout = mdt.layout
    cleans = assert_cleans_as_java(path)
    assert len(cleans) >= 2
    # Java's order within one write: its clean, then its compaction, then its deltacommit. In version 6 the
    # clean after deltacommit t is t002 and a compaction t001: a clean and a compaction of the same write share t.
    archived = archived_times(meta, layout)
    active_compactions = mdt.timeline.filter(actions=[Action.COMMIT], states=[State.COMPLETED])
    compactions = sorted({t for t, a in archived if a == "commit"} | {i.timestamp for i in active_compactions})
    assert len(compactions) >= 2
    if layout != LAYOUT_2:
        assert any(c[:-3] + "001" in compactions for c in cleans)
    # Archival: the oldest instants went, none at or after the data table's first commit, the last clean's
    # earliest retained instant or the latest compaction; every pending state file went with its instant.
    assert archived, "the metadata table's timeline was archived"
    data = Timeline.load(Storage(path))
    first_data = data.completed_commits()[0].timestamp
    last_clean = deserialize(AvroModel.CLEAN_METADATA, meta.read_bytes(
        next(i for i in mdt.timeline.instants if i.timestamp == cleans[-1]).path))
    active = {(i.timestamp, i.action.value) for i in mdt.timeline.instants}
    archived_writes = [t for t, a in archived if a in ("deltacommit", "commit")]
    assert archived_writes and max(archived_writes) < min(first_data, last_clean["earliestCommitToRetain"],
                                                          compactions[-1])
    assert not set(archived) & active
    assert len(mdt.timeline.completed_commits()) >= 2
    states = state_files(meta, layout)
    for (t, action), present in states.items():
        if action in ("deltacommit", "clean"):
            assert present == {"requested", "inflight", "completed"}, (t, action, present)
        elif action == "compaction":
            assert present == {"requested", "inflight"} and states[(t, "commit")] == {"completed"}
    for t, action in archived:  # no state file of an archived instant is left
        assert (t, action) not in states and (action != "commit" or (t, "compaction") not in states)
    # The metadata table still reads (listing equal to storage's, hudi-rs with and without it) after archival.
    model.upsert([(50, "b", 99, "late")])
    model.check()
    assert_in_step(model.table)


def test_a_clean_of_the_metadata_table_a_crash_interrupted_is_finished_by_the_next_write(spark, tmp_path,
                                                                                      monkeypatch):
    path = str(tmp_path / "t")
    model = Model(spark, make_table(spark, path, {**OPTIONS, "hoodie.archive.automatic": "false"}))
    real_execute = cleaner._execute

    def crash(meta, plan, inflight):  # one file deleted, then the process dies before the clean completes
        first = next(p for paths in plan.files_per_partition.values() for p in paths)
        meta.delete(first)
        raise RuntimeError("crash during the metadata table's clean")

    monkeypatch.setattr(cleaner, "_execute", crash)
    crashed = None
    for round_ in range(12):
        try:
            model.upsert([(round_, "ab"[round_ % 2], round_, f"v{round_}")])
        except RuntimeError:  # the write did not complete: the model keeps its rows out
            crashed = round_
            break
    assert crashed is not None, "a clean of the metadata table was due"
    mdt = MetadataTable(Storage(path))
    [pending] = mdt.timeline.pending([Action.CLEAN])
    assert pending.state == State.INFLIGHT
    plan = deserialize(AvroModel.CLEANER_PLAN, mdt.storage.read_bytes(pending.path))
    planned = [f["filePath"] for files in plan["filePathsToBeDeletedPerPartition"].values() for f in files]
    assert sum(Path(f).exists() for f in planned) == len(planned) - 1
    # Readers skip the unfinished clean; the next write rolls back the failed one and finishes the clean.
    monkeypatch.setattr(cleaner, "_execute", real_execute)
    model.upsert([(40, "a", 40, "after")])
    mdt = MetadataTable(Storage(path))
    assert [i.timestamp for i in mdt.timeline.filter(actions=[Action.CLEAN], states=[State.COMPLETED])][:1] == [
        pending.timestamp]
    assert not any(Path(f).exists() for f in planned)
    assert_cleans_as_java(path)
    model.check()
