"""Tests of hoodpy.timeline.avro_models: Hudi 0.14 Avro instant files, written and read."""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import fastavro
import pytest
from fastavro.repository import AbstractSchemaRepository, SchemaRepositoryError
from fastavro.schema import load_schema

from hoodpy.errors import InvalidInstantError
from hoodpy.timeline import avro_models as am
from hoodpy.timeline.avro_models import AvroModel

REPO_ROOT = Path(__file__).resolve().parents[3]
# shared/ sits beside the repository clone (CI and developer machines alike).
SAMPLES = Path(os.environ.get("HOODPY_HUDI_SAMPLES", REPO_ROOT.parent / "shared" / "hudi-samples"))
OVERWRITE_ZIP = SAMPLES / "v6_simplekeygen_nonhivestyle_overwritetable.zip"
REPLACE_REQUESTED = "20240707001303088.replacecommit.requested"

PARTITION = "americas/brazil/sao_paulo"


def _slice(partition: str, file_id: str, instant: str) -> dict[str, Any]:
    return {
        "dataFilePath": f"{partition}/{file_id}_0-1-0_{instant}.parquet",
        "deltaFilePaths": [],
        "fileId": file_id,
        "partitionPath": partition,
        "bootstrapFilePath": "",
        "version": 1,
    }


CLUSTERING_PLAN: dict[str, Any] = {
    "inputGroups": [
        {
            "slices": [_slice(PARTITION, "fg-1", "20240101000000000"), _slice(PARTITION, "fg-2", "20240101000000000")],
            "metrics": {"TOTAL_IO_MB": 12.5, "TOTAL_LOG_FILES": 0.0},
            "numOutputFileGroups": 1,
            "extraMetadata": None,
            "version": 1,
        },
        {
            "slices": [_slice("asia/india/chennai", "fg-3", "20240102000000000"),
                       _slice("asia/india/chennai", "fg-4", "20240102000000000")],
            "metrics": {"TOTAL_IO_MB": 3.0},
            "numOutputFileGroups": 2,
            "extraMetadata": {"note": "second group"},
            "version": 1,
        },
    ],
    "strategy": {
        "strategyClassName": "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
        "strategyParams": {"sortColumns": "rider,ts"},
        "version": 1,
    },
    "extraMetadata": {},
    "version": 1,
    "preserveHoodieMetadata": True,
}

ROLLBACK_METADATA: dict[str, Any] = {
    "startRollbackTime": "20240103000000000",
    "timeTakenInMillis": 195,
    "totalFilesDeleted": 1,
    "commitsRollback": ["20240102000000000"],
    "partitionMetadata": {
        PARTITION: {
            "partitionPath": PARTITION,
            "successDeleteFiles": [f"/tbl/{PARTITION}/fg-5_0-1-0_20240102000000000.parquet"],
            "failedDeleteFiles": [],
            "rollbackLogFiles": None,
            "logFilesFromFailedCommit": None,
        }
    },
    "version": 1,
    "instantsRollback": [{"commitTime": "20240102000000000", "action": "commit"}],
}

# One realistic record per model, complete (every field given) so that a round trip returns it unchanged.
RECORDS: dict[AvroModel, dict[str, Any]] = {
    AvroModel.REQUESTED_REPLACE_METADATA: {
        "operationType": "CLUSTER",
        "clusteringPlan": CLUSTERING_PLAN,
        "extraMetadata": {},
        "version": 1,
    },
    AvroModel.CLUSTERING_PLAN: CLUSTERING_PLAN,
    AvroModel.CLEANER_PLAN: {
        "earliestInstantToRetain": {"timestamp": "20240101000000000", "action": "commit", "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": "20240105000000000",
        "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            PARTITION: [
                {"filePath": f"/tbl/{PARTITION}/fg-1_0-1-0_20231231000000000.parquet", "isBootstrapBaseFile": False},
                {"filePath": f"/tbl/{PARTITION}/fg-2_0-1-0_20231231000000000.parquet", "isBootstrapBaseFile": False},
            ],
            "asia/india/chennai": [
                {"filePath": "/tbl/asia/india/chennai/fg-3_0-1-0_20231231000000000.parquet",
                 "isBootstrapBaseFile": None},
            ],
        },
        "partitionsToBeDeleted": [],
    },
    AvroModel.CLEAN_METADATA: {
        "startCleanTime": "20240106000000000",
        "timeTakenInMillis": 42,
        "totalFilesDeleted": 3,
        "earliestCommitToRetain": "20240101000000000",
        "lastCompletedCommitTimestamp": "20240105000000000",
        "partitionMetadata": {
            PARTITION: {
                "partitionPath": PARTITION,
                "policy": "KEEP_LATEST_COMMITS",
                "deletePathPatterns": ["fg-1_0-1-0_20231231000000000.parquet", "fg-2_0-1-0_20231231000000000.parquet"],
                "successDeleteFiles": ["fg-1_0-1-0_20231231000000000.parquet", "fg-2_0-1-0_20231231000000000.parquet"],
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            },
            "asia/india/chennai": {
                "partitionPath": "asia/india/chennai",
                "policy": "KEEP_LATEST_COMMITS",
                "deletePathPatterns": ["fg-3_0-1-0_20231231000000000.parquet"],
                "successDeleteFiles": ["fg-3_0-1-0_20231231000000000.parquet"],
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            },
        },
        "version": 2,
        "bootstrapPartitionMetadata": {},
    },
    AvroModel.ROLLBACK_PLAN: {
        "instantToRollback": {"commitTime": "20240102000000000", "action": "commit"},
        "RollbackRequests": [
            {
                "partitionPath": PARTITION,
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": [f"/tbl/{PARTITION}/fg-5_0-1-0_20240102000000000.parquet"],
                "logBlocksToBeDeleted": {},
            }
        ],
        "version": 1,
    },
    AvroModel.ROLLBACK_METADATA: ROLLBACK_METADATA,
    AvroModel.SAVEPOINT_METADATA: {
        "savepointedBy": "hoodpy",
        "savepointedAt": 1704067200,
        "comments": "before backfill",
        "partitionMetadata": {
            PARTITION: {"partitionPath": PARTITION, "savepointDataFile": ["fg-1_0-1-0_20240101000000000.parquet"]},
        },
        "version": 1,
    },
    AvroModel.RESTORE_PLAN: {
        "instantsToRollback": [
            {"commitTime": "20240103000000000", "action": "commit"},
            {"commitTime": "20240102000000000", "action": "commit"},
        ],
        "version": 2,
        "savepointToRestoreTimestamp": "20240101000000000",
    },
    AvroModel.RESTORE_METADATA: {
        "startRestoreTime": "20240107000000000",
        "timeTakenInMillis": 300,
        "instantsToRollback": ["20240102000000000"],
        "hoodieRestoreMetadata": {"20240102000000000": [ROLLBACK_METADATA]},
        "version": 1,
        "restoreInstantInfo": [{"commitTime": "20240102000000000", "action": "commit"}],
    },
}


def _normalized(node: Any) -> Any:
    """Schema without what does not change the encoding: Java's avro.java.string props, docs, fastavro keys."""
    if isinstance(node, dict):
        out = {
            k: _normalized(v)
            for k, v in node.items()
            if k not in ("avro.java.string", "doc") and not k.startswith("__")
        }
        return out["type"] if set(out) == {"type"} and isinstance(out["type"], str) else out
    if isinstance(node, list):
        return [_normalized(v) for v in node]
    return node


@pytest.fixture
def overwrite_table_hoodie(tmp_path: Path) -> Path:
    """The .hoodie folder of the Java-written insert_overwrite_table sample, unzipped into tmp_path."""
    if not OVERWRITE_ZIP.exists():
        pytest.skip(f"Hudi sample tables not found at {SAMPLES}")
    with zipfile.ZipFile(OVERWRITE_ZIP) as zf:
        zf.extractall(tmp_path)
    [hoodie] = [p for p in tmp_path.rglob(".hoodie") if "__MACOSX" not in p.parts]
    return hoodie


_WRITE_STAT = {
    "fileId": "fg-1", "path": f"{PARTITION}/fg-1_0-1-0_20240101000000000.parquet", "prevCommit": "null",
    "prevFilePathOverwritten": None, "numWrites": 10, "numDeletes": 0, "numUpdateWrites": 2, "totalWriteBytes": 1024,
    "totalWriteErrors": 0, "partitionPath": PARTITION, "totalLogRecords": 0, "totalLogFiles": None,
    "totalUpdatedRecordsCompacted": 0, "numInserts": 8, "totalLogBlocks": 0, "totalCorruptLogBlock": 0,
    "totalRollbackBlocks": 0, "fileSizeInBytes": 1024,
}
RECORDS[AvroModel.COMMIT_METADATA] = {
    "partitionToWriteStats": {PARTITION: [_WRITE_STAT]}, "extraMetadata": {"schema": "{}"}, "version": 1,
    "operationType": "UPSERT",
}
RECORDS[AvroModel.REPLACE_COMMIT_METADATA] = {
    "partitionToWriteStats": {PARTITION: [_WRITE_STAT]}, "extraMetadata": {}, "version": 1,
    "operationType": "CLUSTER", "partitionToReplaceFileIds": {PARTITION: ["fg-0"]},
}
RECORDS[AvroModel.COMPACTION_PLAN] = {  # as the metadata table's compaction plans it
    "operations": [{"baseInstantTime": "00000000000000010",
                    "deltaFilePaths": [".files-0000-0_00000000000000010.log.1_0-0-0"],
                    "dataFilePath": "files-0000-0_0-1-0_00000000000000010.hfile", "fileId": "files-0000-0",
                    "partitionPath": "files", "metrics": {"TOTAL_LOG_FILES": 1.0}, "externalDataFilePath": None}],
    "extraMetadata": {}, "version": 2,
}
RECORDS[AvroModel.ARCHIVED_META_ENTRY] = {
    "hoodieCommitMetadata": RECORDS[AvroModel.COMMIT_METADATA], "hoodieCleanMetadata": None,
    "hoodieCompactionMetadata": None, "hoodieRollbackMetadata": None, "hoodieSavePointMetadata": None,
    "commitTime": "20240101000000000", "actionType": "commit", "version": 1, "hoodieCompactionPlan": None,
    "hoodieCleanerPlan": None, "actionState": "COMPLETED", "hoodieReplaceCommitMetadata": None,
    "hoodieRequestedReplaceMetadata": None, "HoodieInflightReplaceMetadata": None,
    "hoodieIndexCommitMetadata": None, "stateTransitionTime": "20240101000000123",
}


def test_model_values_are_full_avro_names() -> None:
    assert AvroModel.CLEANER_PLAN.value == "org.apache.hudi.avro.model.HoodieCleanerPlan"
    assert AvroModel.SAVEPOINT_METADATA.short_name == "HoodieSavepointMetadata"
    assert {m.value.rsplit(".", 1)[0] for m in AvroModel} == {"org.apache.hudi.avro.model"}
    assert set(RECORDS) == set(AvroModel)


@pytest.mark.parametrize("model", list(AvroModel), ids=lambda m: m.short_name)
def test_round_trip(model: AvroModel) -> None:
    record = RECORDS[model]
    data = am.serialize(model, record)

    assert data.startswith(b"Obj\x01")
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.codec == "null"
    assert reader.writer_schema["name"] == model.value
    assert len(list(reader)) == 1
    assert am.deserialize(model, data) == record


def test_serialize_accepts_the_full_name_string() -> None:
    data = am.serialize(AvroModel.ROLLBACK_PLAN.value, RECORDS[AvroModel.ROLLBACK_PLAN])
    assert am.deserialize(AvroModel.ROLLBACK_PLAN.value, data) == RECORDS[AvroModel.ROLLBACK_PLAN]


def test_absent_fields_get_schema_defaults_at_every_level() -> None:
    plan = {
        "inputGroups": [{"slices": [{"fileId": "fg-1", "dataFilePath": "p/fg-1.parquet"}]}],
        "strategy": {"strategyParams": {"sortColumns": "a"}},
    }
    out = am.deserialize(AvroModel.CLUSTERING_PLAN, am.serialize(AvroModel.CLUSTERING_PLAN, plan))

    assert out["version"] == 1 and out["extraMetadata"] is None and out["preserveHoodieMetadata"] is None
    group = out["inputGroups"][0]
    assert group["numOutputFileGroups"] == 1 and group["metrics"] is None and group["version"] == 1
    assert group["slices"][0] == {
        "dataFilePath": "p/fg-1.parquet",
        "deltaFilePaths": None,
        "fileId": "fg-1",
        "partitionPath": None,
        "bootstrapFilePath": None,
        "version": 1,
    }
    assert out["strategy"] == {"strategyClassName": None, "strategyParams": {"sortColumns": "a"}, "version": 1}


def test_defaults_of_non_null_fields() -> None:
    data = am.serialize(AvroModel.CLEANER_PLAN, {"policy": "KEEP_LATEST_COMMITS"})
    cleaner = am.deserialize(AvroModel.CLEANER_PLAN, data)
    assert cleaner["lastCompletedCommitTimestamp"] == ""
    assert cleaner["version"] == 1  # the schema default: Hudi 0.14 itself writes version 2
    restore = am.deserialize(AvroModel.RESTORE_PLAN, am.serialize(AvroModel.RESTORE_PLAN, {}))
    assert restore == {"instantsToRollback": [], "version": 2, "savepointToRestoreTimestamp": None}


def test_serialize_does_not_mutate_its_input() -> None:
    record = {"policy": "KEEP_LATEST_COMMITS"}
    am.serialize(AvroModel.CLEANER_PLAN, record)
    assert record == {"policy": "KEEP_LATEST_COMMITS"}


@pytest.mark.parametrize(
    ("model", "record", "message"),
    [
        (AvroModel.CLEANER_PLAN, {"policy": "KEEP_LATEST_COMMITS", "polcy": "x"}, "unknown field"),
        (AvroModel.CLUSTERING_PLAN, {"inputGroups": [{"slices": [{"fileId": "f", "bogus": 1}]}]}, "bogus"),
        (AvroModel.CLEAN_METADATA, {"startCleanTime": "1"}, "timeTakenInMillis is required"),
        (AvroModel.SAVEPOINT_METADATA, {"savepointedBy": "u", "savepointedAt": "not a long", "comments": "",
                                        "partitionMetadata": {}}, "HoodieSavepointMetadata"),
    ],
)
def test_serialize_rejects_invalid_records(model: AvroModel, record: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        am.serialize(model, record)


def test_schema_is_self_contained_and_a_fresh_copy() -> None:
    s = am.schema(AvroModel.RESTORE_METADATA)
    assert s["name"] == AvroModel.RESTORE_METADATA.value
    # HoodieInstantInfo is used twice (inside the rollback metadata and by restoreInstantInfo): defined once.
    text = repr(_normalized(s))  # fastavro keeps a copy of every named type under __named_schemas
    assert text.count("'name': 'org.apache.hudi.avro.model.HoodieInstantInfo'") == 1
    s["fields"].clear()
    assert am.schema(AvroModel.RESTORE_METADATA)["fields"]
    assert am.schema(AvroModel.CLUSTERING_PLAN.value)["name"] == AvroModel.CLUSTERING_PLAN.value


def test_reads_java_written_replacecommit_requested(overwrite_table_hoodie: Path) -> None:
    data = (overwrite_table_hoodie / REPLACE_REQUESTED).read_bytes()

    record = am.deserialize(AvroModel.REQUESTED_REPLACE_METADATA, data, source=REPLACE_REQUESTED)

    # insert_overwrite_table: Hudi 0.14 writes an empty HoodieRequestedReplaceMetadata (no-arg constructor),
    # so every field, version included, is an explicit null rather than its schema default.
    assert record == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}


def test_schema_matches_the_writer_schema_java_hudi_014_embeds(overwrite_table_hoodie: Path) -> None:
    data = (overwrite_table_hoodie / REPLACE_REQUESTED).read_bytes()
    java = fastavro.reader(io.BytesIO(data)).writer_schema

    assert _normalized(java) == _normalized(am.schema(AvroModel.REQUESTED_REPLACE_METADATA))


def _write_with(writer_schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(writer_schema), [record], codec="deflate")
    return buf.getvalue()


def test_reads_older_writer_schema_filling_defaults() -> None:
    # A Hudi 0.12-style cleaner plan: no lastCompletedCommitTimestamp, no partitionsToBeDeleted.
    old = copy.deepcopy(am.schema(AvroModel.CLEANER_PLAN))
    dropped = ("lastCompletedCommitTimestamp", "partitionsToBeDeleted")
    old["fields"] = [f for f in old["fields"] if f["name"] not in dropped]
    old = _normalized(old)
    data = _write_with(old, {"earliestInstantToRetain": None, "policy": "KEEP_LATEST_FILE_VERSIONS",
                             "filesToBeDeletedPerPartition": {"p": ["f1.parquet"]}, "version": 1,
                             "filePathsToBeDeletedPerPartition": None})

    out = am.deserialize(AvroModel.CLEANER_PLAN, data)

    assert out["lastCompletedCommitTimestamp"] == "" and out["partitionsToBeDeleted"] is None
    assert out["filesToBeDeletedPerPartition"] == {"p": ["f1.parquet"]}


def test_reads_newer_writer_schema_dropping_unknown_fields() -> None:
    # Later Hudi releases append extraMetadata to HoodieCleanMetadata; 0.14 readers ignore it.
    new = _normalized(am.schema(AvroModel.CLEAN_METADATA))
    new["fields"].append(
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None}
    )
    record = dict(RECORDS[AvroModel.CLEAN_METADATA], extraMetadata={"savepointed_timestamps": "x"})

    out = am.deserialize(AvroModel.CLEAN_METADATA, _write_with(new, record))

    assert out == RECORDS[AvroModel.CLEAN_METADATA]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"this is not avro at all", "not a readable Avro container file"),
        (b'{"partitionToWriteStats": {}}', "not a readable Avro container file"),
    ],
    ids=["empty", "garbage", "json"],
)
def test_unreadable_input_raises_invalid_instant_naming_the_source(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInstantError, match=message) as e:
        am.deserialize(AvroModel.CLEANER_PLAN, data, source="20240101000000000.clean.requested")
    assert "20240101000000000.clean.requested" in str(e.value)
    assert "HoodieCleanerPlan" in str(e.value)


def test_truncated_file_raises_invalid_instant() -> None:
    data = am.serialize(AvroModel.CLEAN_METADATA, RECORDS[AvroModel.CLEAN_METADATA])
    with pytest.raises(InvalidInstantError, match="001.clean"):
        am.deserialize(AvroModel.CLEAN_METADATA, data[: len(data) - 40], source="001.clean")


def test_other_record_type_raises_invalid_instant() -> None:
    data = am.serialize(AvroModel.CLEANER_PLAN, RECORDS[AvroModel.CLEANER_PLAN])
    with pytest.raises(InvalidInstantError, match="holds a org.apache.hudi.avro.model.HoodieCleanerPlan record"):
        am.deserialize(AvroModel.ROLLBACK_PLAN, data, source="001.rollback.requested")


def test_container_without_record_raises_invalid_instant() -> None:
    buf = io.BytesIO()
    fastavro.writer(buf, am.schema(AvroModel.ROLLBACK_PLAN), [], codec="null")
    with pytest.raises(InvalidInstantError, match="holds no record"):
        am.deserialize(AvroModel.ROLLBACK_PLAN, buf.getvalue())


def test_error_message_without_source() -> None:
    with pytest.raises(InvalidInstantError, match=r"^Cannot read HoodieRollbackMetadata: the file is empty$"):
        am.deserialize(AvroModel.ROLLBACK_METADATA, b"")


class _PackagedSchemas(AbstractSchemaRepository):
    """fastavro's view of hoodpy's .avsc files: the type ``<namespace>.<Name>`` is ``avro/<Name>.avsc``."""

    def load(self, name: str) -> dict[str, Any]:
        entry = resources.files("hoodpy.timeline").joinpath("avro").joinpath(f"{name.rsplit('.', 1)[-1]}.avsc")
        try:
            return json.loads(entry.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise SchemaRepositoryError(name) from e


def _header_text(parsed: dict[str, Any]) -> str:
    """The schema text fastavro's writer embeds in a container file."""
    return json.dumps({k: v for k, v in parsed.items() if k not in ("__fastavro_parsed", "__named_schemas")})


@pytest.mark.parametrize("model", list(AvroModel), ids=lambda m: m.short_name)
def test_named_types_resolve_as_fastavro_load_schema_does(model: AvroModel) -> None:
    # Each named type defined at its first use, key order included: this text is embedded in every file.
    assert _header_text(am.schema(model)) == _header_text(load_schema(model.value, repo=_PackagedSchemas()))


def test_schemas_load_from_a_zip(tmp_path: Path) -> None:
    """Spark executors may import hoodpy from a zip (spark.submit.pyFiles), where files have no path."""
    package = Path(am.__file__).resolve().parents[1]
    zipped = tmp_path / "hoodpy.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for f in sorted(package.rglob("*")):
            if f.suffix in (".py", ".avsc"):
                z.write(f, f.relative_to(package.parent).as_posix())
    script = ("import sys; from hoodpy.timeline import avro_models as am; assert '.zip' in am.__file__, am.__file__; "
              "sys.stdout.write(am.schema_json(am.AvroModel.ARCHIVED_META_ENTRY))")

    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(zipped)},
                          cwd=tmp_path, capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
    assert done.stdout == am.schema_json(AvroModel.ARCHIVED_META_ENTRY)
