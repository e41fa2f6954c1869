"""The compaction plan file: the bytes hoodpy writes decode with Hudi's schema (the one Hudi 1.1 embeds in
its own plans, a superset of 0.14's), a Java-written plan reads back, and the timeline folds a compaction into
the commit it completes as."""

from __future__ import annotations

import io
import json
import zipfile

import fastavro
import pytest

from java_samples import SAMPLES_DIR
from hoodpy.config.properties import save_table_properties
from hoodpy.errors import PlanNotFoundError
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.compaction_plan import (
    CompactionOperation,
    CompactionPlan,
    load_compaction_plan,
    pending_compaction_file_groups,
    pending_compaction_instant,
    save_compaction_plan,
)
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.timeline import Timeline

V9_ZIP = SAMPLES_DIR / "hudi-rs/sample_table/mor/avro/v9_txns_complex_nometa.zip"
V9_PLAN = "v9_txns_complex_nometa/.hoodie/timeline/20260307135909445.compaction.requested"

OP = CompactionOperation(
    partition_path="region=us", file_id="fg-1-0", base_instant_time="20250101000000000",
    data_file_name="fg-1-0_0-1-0_20250101000000000.parquet",
    delta_file_names=(".fg-1-0_20250101000000000.log.1_0-2-0", ".fg-1-0_20250101000000000.log.2_0-3-0"),
    metrics={"TOTAL_LOG_FILES": 2.0, "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0, "TOTAL_LOG_FILES_SIZE": 3939.0,
             "TOTAL_IO_WRITE_MB": 0.0})
LOG_ONLY = CompactionOperation(partition_path="", file_id="fg-2-0", base_instant_time="20250102000000000",
                               data_file_name=None, delta_file_names=(".fg-2-0_20250102000000000.log.1_0-1-0",),
                               metrics={"TOTAL_LOG_FILES": 1.0, "TOTAL_IO_MB": 120.0})


@pytest.fixture
def v9_plan() -> tuple[dict, bytes]:
    """(writer schema, bytes) of a compaction plan Hudi 1.1 wrote."""
    if not V9_ZIP.exists():
        pytest.skip(f"sample {V9_ZIP} not available")
    with zipfile.ZipFile(V9_ZIP) as z:
        data = z.read(V9_PLAN)
    return fastavro.reader(io.BytesIO(data)).writer_schema, data


def _table(tmp_path) -> Storage:
    storage = Storage(str(tmp_path / "t"))
    storage.mkdirs(".hoodie")
    save_table_properties(storage, {"hoodie.table.name": "t", "hoodie.table.version": "6",
                                    "hoodie.table.type": "MERGE_ON_READ"})
    return storage


def _strip(node):
    """A schema without what does not change the encoding (Java's string props, docs)."""
    if isinstance(node, dict):
        out = {k: _strip(v) for k, v in node.items() if k not in ("avro.java.string", "doc")}
        return out["type"] if set(out) == {"type"} and isinstance(out["type"], str) else out
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def test_written_plan_decodes_with_hudis_schema(tmp_path, v9_plan):
    """Our bytes read with Hudi 1.1's writer schema as reader schema: every 0.14 field comes back, the field
    Hudi added after 0.14 takes its default; and our embedded schema is Hudi's without that field."""
    storage = _table(tmp_path)
    save_compaction_plan(storage, CompactionPlan((OP, LOG_ONLY), instant_time="20250103000000000"))
    data = storage.read_bytes(".hoodie/20250103000000000.compaction.requested")
    hudi_schema, _ = v9_plan
    [record] = list(fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(hudi_schema)))
    assert record["version"] == 2 and record["extraMetadata"] is None and record["strategy"] is None
    assert record["preserveHoodieMetadata"] is False and record["missingSchedulePartitions"] is None
    first, second = record["operations"]
    assert first == {"baseInstantTime": "20250101000000000", "deltaFilePaths": list(OP.delta_file_names),
                     "dataFilePath": OP.data_file_name, "fileId": "fg-1-0", "partitionPath": "region=us",
                     "metrics": OP.metrics, "bootstrapFilePath": None}
    assert second["dataFilePath"] is None and second["partitionPath"] == ""
    # Field for field, the schema Hudi embeds less the field that came after 0.14.
    ours = _strip(fastavro.reader(io.BytesIO(data)).writer_schema)
    theirs = _strip(hudi_schema)
    theirs["fields"] = [f for f in theirs["fields"] if f["name"] != "missingSchedulePartitions"]
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)
    # Java 0.14 writes the plan into .hoodie/.aux too, and an empty inflight file.
    assert storage.read_bytes(".hoodie/.aux/20250103000000000.compaction.requested") == data


def test_java_plan_reads_back(tmp_path, v9_plan):
    _, data = v9_plan
    storage = _table(tmp_path)
    storage.write_bytes(".hoodie/20260307135909445.compaction.requested", data)
    plan = load_compaction_plan(storage, "20260307135909445")
    assert plan.version == 2 and len(plan.operations) == 2
    op = plan.operations[0]
    assert (op.partition_path, op.base_instant_time, op.data_file_name) == (
        "region=us", "20260307135857131", "bfbf1f57-f4cd-4186-afc4-2778be3d4e70-0_1-3-7_20260307135857131.parquet")
    assert op.delta_file_paths == [f"region=us/{n}" for n in op.delta_file_names] and len(op.delta_file_names) == 2
    assert op.total_log_size == 3939
    # Re-encoded, the operations are what Java wrote.
    assert [o.to_avro() for o in CompactionPlan.from_avro(plan.to_avro()).operations] == \
        [o.to_avro() for o in plan.operations]


def test_version_1_plan_paths_become_names():
    plan = CompactionPlan.from_avro({"version": 1, "operations": [
        {"baseInstantTime": "1", "fileId": "f", "partitionPath": "p",
         "dataFilePath": "/base/p/f_0-1-0_1.parquet", "deltaFilePaths": ["/base/p/.f_1.log.1_0-1-0"]}]})
    assert plan.operations[0].data_file_name == "f_0-1-0_1.parquet"
    assert plan.operations[0].delta_file_names == (".f_1.log.1_0-1-0",)


def test_pending_compaction_per_file_group_and_timeline_entry(tmp_path):
    storage = _table(tmp_path)
    with pytest.raises(PlanNotFoundError, match="No compaction plan at 20250103000000000"):
        load_compaction_plan(storage, "20250103000000000")
    requested = save_compaction_plan(storage, CompactionPlan((OP, LOG_ONLY), instant_time="20250103000000000"))
    timeline = Timeline.load(storage)
    assert pending_compaction_instant(storage, timeline, "region=us", "fg-1-0") == "20250103000000000"
    assert pending_compaction_instant(storage, timeline, "", "fg-2-0") == "20250103000000000"
    assert pending_compaction_instant(storage, timeline, "region=us", "fg-2-0") is None
    inflight = transitions.transition_to_inflight(storage, requested)
    assert storage.read_bytes(inflight.path) == b""
    [entry] = Timeline.load(storage).instants
    assert (entry.action, entry.state) == (Action.COMPACTION, State.INFLIGHT)
    completed = transitions.complete(storage, inflight, b"{}")
    assert completed.path == ".hoodie/20250103000000000.commit"
    # One entry: the commit the compaction completed as; no longer pending.
    timeline = Timeline.load(storage)
    [entry] = timeline.instants
    assert (entry.action, entry.state) == (Action.COMMIT, State.COMPLETED)
    assert timeline.pending([Action.COMPACTION]) == [] and pending_compaction_file_groups(storage, timeline) == {}
