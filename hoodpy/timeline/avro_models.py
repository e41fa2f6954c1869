"""Hudi's Avro-encoded timeline instant files: their schemas (as Hudi 0.14.x defines them) and their codec.

Several instant files are not JSON but Avro object container files holding exactly one record, written by
Hudi's ``TimelineMetadataUtils.serializeAvroMetadata`` (a ``DataFileWriter``, codec null, writer schema
embedded):

===============================================  ===============================================
instant file                                     record
===============================================  ===============================================
``<t>.replacecommit.requested``                  HoodieRequestedReplaceMetadata (clustering plan)
``<t>.clean.requested`` / ``<t>.clean.inflight``  HoodieCleanerPlan
``<t>.clean``                                    HoodieCleanMetadata
``<t>.rollback.requested``                       HoodieRollbackPlan
``<t>.rollback``                                 HoodieRollbackMetadata
``<t>.savepoint``                                HoodieSavepointMetadata
``<t>.restore.requested``                        HoodieRestorePlan
``<t>.restore``                                  HoodieRestoreMetadata
===============================================  ===============================================

The schemas below are transcribed from ``hudi-common/src/main/avro/*.avsc`` of Hudi 0.14.x, with each
literal naming its .avsc file. Records are plain dicts, as fastavro reads and writes them.

Example:
    >>> from hoodpy.timeline import avro_models as am
    >>> plan = {"policy": "KEEP_LATEST_COMMITS", "version": 2,
    ...         "filePathsToBeDeletedPerPartition": {"2024": [{"filePath": "/t/2024/f.parquet"}]}}
    >>> data = am.serialize(am.AvroModel.CLEANER_PLAN, plan)
    >>> data[:4]
    b'Obj\\x01'
    >>> am.deserialize(am.AvroModel.CLEANER_PLAN, data)["lastCompletedCommitTimestamp"]
    ''
"""

from __future__ import annotations

import copy
import io
from collections.abc import Mapping
from enum import Enum
from functools import lru_cache
from typing import Any

import fastavro
from fastavro.validation import ValidationError

from hoodpy.errors import InvalidInstantError

NAMESPACE = "org.apache.hudi.avro.model"

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = frozenset({"record", "error", "enum", "fixed"})


class AvroModel(str, Enum):
    """The Avro records Hudi writes into timeline instant files; the value is the record's full name."""

    REQUESTED_REPLACE_METADATA = f"{NAMESPACE}.HoodieRequestedReplaceMetadata"
    CLUSTERING_PLAN = f"{NAMESPACE}.HoodieClusteringPlan"
    CLEANER_PLAN = f"{NAMESPACE}.HoodieCleanerPlan"
    CLEAN_METADATA = f"{NAMESPACE}.HoodieCleanMetadata"
    ROLLBACK_PLAN = f"{NAMESPACE}.HoodieRollbackPlan"
    ROLLBACK_METADATA = f"{NAMESPACE}.HoodieRollbackMetadata"
    SAVEPOINT_METADATA = f"{NAMESPACE}.HoodieSavepointMetadata"
    RESTORE_PLAN = f"{NAMESPACE}.HoodieRestorePlan"
    RESTORE_METADATA = f"{NAMESPACE}.HoodieRestoreMetadata"
    COMMIT_METADATA = f"{NAMESPACE}.HoodieCommitMetadata"
    REPLACE_COMMIT_METADATA = f"{NAMESPACE}.HoodieReplaceCommitMetadata"
    ARCHIVED_META_ENTRY = f"{NAMESPACE}.HoodieArchivedMetaEntry"

    @property
    def short_name(self) -> str:
        """The record name without its namespace, e.g. ``HoodieCleanerPlan``."""
        return self.value.rsplit(".", 1)[1]


# --------------------------------------------------------------------------------------------------------
# Schemas, transcribed from apache/hudi hudi-common/src/main/avro/ as of the 0.14.x releases (table
# version 6). Where the indexed .avsc history did not hold the 0.14 revision, the field list was taken from
# the writer schema that Hudi 0.14.x Java embeds in its own instant files (see the notes per literal).
# Named types are referenced by name, as in the .avsc files; _expand() inlines them.
# --------------------------------------------------------------------------------------------------------

# HoodieSliceInfo.avsc (apache/hudi d5e5c40b; identical to the 0.14.x writer schema). fileId has no default
# in Hudi either.
_SLICE_INFO: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieSliceInfo",
    "fields": [
        {"name": "dataFilePath", "type": ["null", "string"], "default": None},
        {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
        {"name": "fileId", "type": ["null", "string"]},
        {"name": "partitionPath", "type": ["null", "string"], "default": None},
        {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieClusteringGroup.avsc, 0.14.x (extraMetadata present; checked against the 0.14.x writer schema).
_CLUSTERING_GROUP: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieClusteringGroup",
    "fields": [
        # Group of files that need to be merged; all slices of a group start in the same partition.
        {"name": "slices", "type": ["null", {"type": "array", "items": "HoodieSliceInfo"}], "default": None},
        {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieClusteringStrategy.avsc (apache/hudi 4a0107c3; identical to the 0.14.x writer schema).
_CLUSTERING_STRATEGY: dict[str, Any] = {
    "namespace": NAMESPACE,
    "name": "HoodieClusteringStrategy",
    "type": "record",
    "fields": [
        # Subclass of Hudi's ClusteringStrategy.
        {"name": "strategyClassName", "type": ["null", "string"], "default": None},
        # Strategy specific; e.g. sort-based strategies carry sortColumns here.
        {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieClusteringPlan.avsc, 0.14.x: strategy is ["null", ...] and preserveHoodieMetadata is the last field
# (checked against the 0.14.x writer schema; missingSchedulePartitions came after 0.14 and is not here).
_CLUSTERING_PLAN: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieClusteringPlan",
    "fields": [
        {"name": "inputGroups", "type": ["null", {"type": "array", "items": "HoodieClusteringGroup"}], "default": None},
        {"name": "strategy", "type": ["null", "HoodieClusteringStrategy"], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None},
    ],
}

# HoodieRequestedReplaceMetadata.avsc, 0.14.x: operationType defaults to null and clusteringPlan is
# ["null", plan] (older revisions had default "" and [plan, "null"]; checked against the 0.14.x writer schema).
_REQUESTED_REPLACE_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieRequestedReplaceMetadata",
    "fields": [
        {"name": "operationType", "type": ["null", "string"], "default": None},
        # Only set if operationType == clustering.
        {"name": "clusteringPlan", "type": ["null", "HoodieClusteringPlan"], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieCleanerPlan.avsc, 0.14.x (lastCompletedCommitTimestamp since 0.13; the trailing extraMetadata field
# of later releases, added by HUDI-7104 in 2024, is not in 0.14). HoodieActionInstant and HoodieCleanFileInfo
# are defined inline there.
_CLEANER_PLAN: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCleanerPlan",
    "fields": [
        {
            "name": "earliestInstantToRetain",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "HoodieActionInstant",
                    "fields": [
                        {"name": "timestamp", "type": "string"},
                        {"name": "action", "type": "string"},
                        {"name": "state", "type": "string"},
                    ],
                },
            ],
            "default": None,
        },
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "policy", "type": "string"},
        # Deprecated, replaced by filePathsToBeDeletedPerPartition (plan version 2).
        {
            "name": "filesToBeDeletedPerPartition",
            "type": [
                "null",
                {"type": "map", "values": {"type": "array", "items": {"name": "filePath", "type": "string"}}},
            ],
            "default": None,
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "filePathsToBeDeletedPerPartition",
            "doc": "This field replaces the field filesToBeDeletedPerPartition",
            "type": [
                "null",
                {
                    "type": "map",
                    "values": {
                        "type": "array",
                        "items": {
                            "name": "HoodieCleanFileInfo",
                            "type": "record",
                            "fields": [
                                {"name": "filePath", "type": ["null", "string"], "default": None},
                                {"name": "isBootstrapBaseFile", "type": ["null", "boolean"], "default": None},
                            ],
                        },
                    },
                },
            ],
            "default": None,
        },
        {
            "name": "partitionsToBeDeleted",
            "doc": "partitions to be deleted",
            "type": ["null", {"type": "array", "items": "string"}],
            "default": None,
        },
    ],
}

# HoodieCleanPartitionMetadata.avsc (apache/hudi 655551e5).
_CLEAN_PARTITION_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
    ],
}

# HoodieCleanMetadata.avsc, 0.14.x (apache/hudi 826de778 without its trailing extraMetadata field, which
# HUDI-7104 added after 0.14; the leading "policy" field of some later revisions is not in 0.14 either).
_CLEAN_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCleanMetadata",
    "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": "HoodieCleanPartitionMetadata"}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "bootstrapPartitionMetadata",
            "type": ["null", {"type": "map", "values": "HoodieCleanPartitionMetadata", "default": None}],
            "default": None,
        },
    ],
}

# HoodieInstantInfo.avsc (apache/hudi ac3ae4a6).
_INSTANT_INFO: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieInstantInfo",
    "fields": [
        {"name": "commitTime", "type": "string"},
        {"name": "action", "type": "string"},
    ],
}

# HoodieRollbackPlan.avsc (apache/hudi 971b2c43; identical to the writer schema of a table-version-6 Java
# rollback plan). HoodieRollbackRequest is defined inline.
_ROLLBACK_PLAN: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieRollbackPlan",
    "fields": [
        {
            "name": "instantToRollback",
            "doc": "Hoodie instant that needs to be rolled back",
            "type": ["null", "HoodieInstantInfo"],
            "default": None,
        },
        {
            "name": "RollbackRequests",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieRollbackRequest",
                        "fields": [
                            {"name": "partitionPath", "type": "string"},
                            {"name": "fileId", "type": ["null", "string"], "default": None},
                            {"name": "latestBaseInstant", "type": ["null", "string"], "default": None},
                            {
                                "name": "filesToBeDeleted",
                                "default": [],
                                "type": {"type": "array", "default": [], "items": "string"},
                            },
                            {
                                "name": "logBlocksToBeDeleted",
                                "type": [
                                    "null",
                                    {
                                        "type": "map",
                                        "doc": "Log blocks that need to be deleted as part of the rollback",
                                        "values": {"type": "long", "doc": "Size of this file/block in bytes"},
                                    },
                                ],
                                "default": None,
                            },
                        ],
                    },
                },
            ],
            "default": None,
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieRollbackMetadata.avsc, 0.14.x: apache/hudi 3e0dcf4b plus logFilesFromFailedCommit (the former
# writtenLogFiles), as in the writer schema of a table-version-6 Java rollback. HoodieRollbackPartitionMetadata
# is defined inline.
_ROLLBACK_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
        {
            "name": "partitionMetadata",
            "type": {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                        {
                            "name": "rollbackLogFiles",
                            "type": [
                                "null",
                                {
                                    "type": "map",
                                    "doc": "Files to which append blocks were written to capture rollback commit",
                                    "values": {"type": "long", "doc": "Size of this file in bytes"},
                                },
                            ],
                            "default": None,
                        },
                        {
                            "name": "logFilesFromFailedCommit",
                            "type": ["null", {"type": "map", "values": "long"}],
                            "default": None,
                        },
                    ],
                },
            },
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
        # Overlaps with commitsRollback; also tracks the action of each rolled back instant.
        {
            "name": "instantsRollback",
            "default": [],
            "type": {"type": "array", "default": [], "items": "HoodieInstantInfo"},
        },
    ],
}

# HoodieSavePointMetadata.avsc (apache/hudi 42a480fc; note the file name's capital P). The record is
# HoodieSavepointMetadata; HoodieSavepointPartitionMetadata is defined inline.
_SAVEPOINT_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieSavepointMetadata",
    "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {
            "name": "partitionMetadata",
            "type": {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieSavepointPartitionMetadata",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}},
                    ],
                },
            },
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieRestoreMetadata.avsc (apache/hudi d9d77e4a; the trailing extraMetadata field of much later
# revisions is not in 0.14).
_RESTORE_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieRestoreMetadata",
    "fields": [
        {"name": "startRestoreTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": "string"}},
        {
            "name": "hoodieRestoreMetadata",
            "type": {
                "type": "map",
                "values": {
                    "type": "array",
                    "default": None,
                    "items": ["null", "HoodieRollbackMetadata"],
                    "name": "hoodieRollbackMetadata",
                },
            },
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
        # Overlaps with instantsToRollback; also tracks the action of each rolled back instant.
        {
            "name": "restoreInstantInfo",
            "default": [],
            "type": {"type": "array", "default": None, "items": "HoodieInstantInfo"},
        },
    ],
}

# HoodieRestorePlan.avsc, 0.13+ (apache/hudi 1163eb82): savepointToRestoreTimestamp and version default 2
# came with HUDI-5349. The ["string", "null"] union with a null default is Hudi's, kept as is.
_RESTORE_PLAN: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieRestorePlan",
    "fields": [
        {
            "name": "instantsToRollback",
            "default": [],
            "type": {"type": "array", "default": None, "items": "HoodieInstantInfo"},
        },
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
    ],
}

# -- archival: the records of .hoodie/archived log blocks ---------------------------------------------------
# HoodieWriteStat is defined inline in HoodieCommitMetadata.avsc (apache/hudi 30a7c349); it is declared
# apart here so that HoodieReplaceCommitMetadata can name it on its own. The expanded schema is the same.
_WRITE_STAT: dict[str, Any] = {
    "namespace": NAMESPACE,
    "name": "HoodieWriteStat",
    "type": "record",
    "fields": [
        {"name": name, "type": ["null", kind], "default": None}
        for name, kind in (
            ("fileId", "string"), ("path", "string"), ("prevCommit", "string"),
            ("prevFilePathOverwritten", "string"), ("numWrites", "long"), ("numDeletes", "long"),
            ("numUpdateWrites", "long"), ("totalWriteBytes", "long"), ("totalWriteErrors", "long"),
            ("partitionPath", "string"), ("totalLogRecords", "long"), ("totalLogFiles", "long"),
            ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"), ("totalLogBlocks", "long"),
            ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"), ("fileSizeInBytes", "long"),
        )
    ],
}

# HoodieCommitMetadata.avsc (apache/hudi 30a7c349).
_COMMIT_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCommitMetadata",
    "fields": [
        {"name": "partitionToWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "HoodieWriteStat"}}],
         "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string", "default": None}],
         "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
    ],
}

# HoodieReplaceCommitMetadata.avsc (apache/hudi a99e93be).
_REPLACE_COMMIT_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieReplaceCommitMetadata",
    "fields": [
        {"name": "partitionToWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "HoodieWriteStat"}}],
         "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {"name": "partitionToReplaceFileIds",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}], "default": None},
    ],
}

# HoodieCompactionMetadata.avsc (apache/hudi 3474bcd8; deprecated, never written by hoodpy).
_COMPACTION_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCompactionMetadata",
    "fields": [
        {"name": "partitionToCompactionWriteStats", "type": ["null", {"type": "map", "values": {
            "type": "array", "items": {
                "name": "HoodieCompactionWriteStat", "type": "record", "fields": [
                    {"name": "partitionPath", "type": ["null", "string"]},
                    {"name": "totalLogRecords", "type": ["null", "long"]},
                    {"name": "totalLogFiles", "type": ["null", "long"]},
                    {"name": "totalUpdatedRecordsCompacted", "type": ["null", "long"]},
                    {"name": "hoodieWriteStat", "type": ["null", "HoodieWriteStat"]},
                ]}}}]},
    ],
}

# HoodieCompactionOperation.avsc, which defines HoodieCompactionPlan (apache/hudi 0112dbf0; merge-on-read
# only, never written by hoodpy).
_COMPACTION_PLAN: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieCompactionPlan",
    "fields": [
        {"name": "operations", "type": ["null", {"type": "array", "items": {
            "name": "HoodieCompactionOperation", "type": "record", "fields": [
                {"name": "baseInstantTime", "type": ["null", "string"]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
                {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                {"name": "fileId", "type": ["null", "string"]},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "externalDataFilePath", "type": ["null", "string"], "default": None},
            ]}}], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

# HoodieIndexPartitionInfo.avsc (apache/hudi 8d944498) and HoodieIndexCommitMetadata.avsc (647754bf).
_INDEX_PARTITION_INFO: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieIndexPartitionInfo",
    "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "metadataPartitionPath", "type": ["null", "string"], "default": None},
        {"name": "indexUptoInstant", "type": ["null", "HoodieInstantInfo"], "default": None},
    ],
}
_INDEX_COMMIT_METADATA: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieIndexCommitMetadata",
    "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {"name": "indexPartitionInfos", "type": ["null", {"type": "array", "items": "HoodieIndexPartitionInfo"}],
         "default": None},
    ],
}

# HoodieArchivedMetaEntry.avsc as of the 0.14 line (apache/hudi 94e4c2e7, the last revision of the log-file
# archive before 1.x moved to the LSM timeline): one entry per archived instant state.
_ARCHIVED_META_ENTRY: dict[str, Any] = {
    "namespace": NAMESPACE,
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "fields": [
        {"name": "hoodieCommitMetadata", "type": ["null", "HoodieCommitMetadata"], "default": None},
        {"name": "hoodieCleanMetadata", "type": ["null", "HoodieCleanMetadata"], "default": None},
        {"name": "hoodieCompactionMetadata", "type": ["null", "HoodieCompactionMetadata"], "default": None},
        {"name": "hoodieRollbackMetadata", "type": ["null", "HoodieRollbackMetadata"], "default": None},
        {"name": "hoodieSavePointMetadata", "type": ["null", "HoodieSavepointMetadata"], "default": None},
        {"name": "commitTime", "type": ["null", "string"], "default": None},
        {"name": "actionType", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "hoodieCompactionPlan", "type": ["null", "HoodieCompactionPlan"], "default": None},
        {"name": "hoodieCleanerPlan", "type": ["null", "HoodieCleanerPlan"], "default": None},
        {"name": "actionState", "type": ["null", "string"], "default": None},
        {"name": "hoodieReplaceCommitMetadata", "type": ["null", "HoodieReplaceCommitMetadata"], "default": None},
        {"name": "hoodieRequestedReplaceMetadata", "type": ["null", "HoodieRequestedReplaceMetadata"],
         "default": None},
        {"name": "HoodieInflightReplaceMetadata", "type": ["null", "HoodieCommitMetadata"], "default": None},
        {"name": "hoodieIndexCommitMetadata", "type": ["null", "HoodieIndexCommitMetadata"], "default": None},
        {"name": "stateTransitionTime", "type": ["null", "string"], "default": None},
    ],
}

# Every top-level .avsc above by full name: named references are resolved against this.
_AVSC: dict[str, dict[str, Any]] = {
    f"{s['namespace']}.{s['name']}": s
    for s in (
        _SLICE_INFO,
        _CLUSTERING_GROUP,
        _CLUSTERING_STRATEGY,
        _CLUSTERING_PLAN,
        _REQUESTED_REPLACE_METADATA,
        _CLEANER_PLAN,
        _CLEAN_PARTITION_METADATA,
        _CLEAN_METADATA,
        _INSTANT_INFO,
        _ROLLBACK_PLAN,
        _ROLLBACK_METADATA,
        _SAVEPOINT_METADATA,
        _RESTORE_METADATA,
        _RESTORE_PLAN,
        _WRITE_STAT,
        _COMMIT_METADATA,
        _REPLACE_COMMIT_METADATA,
        _COMPACTION_METADATA,
        _COMPACTION_PLAN,
        _INDEX_PARTITION_INFO,
        _INDEX_COMMIT_METADATA,
        _ARCHIVED_META_ENTRY,
    )
}


# --------------------------------------------------------------------------------------------------------
# Schema resolution
# --------------------------------------------------------------------------------------------------------


def _full_name(name: str, namespace: str) -> str:
    return name if "." in name else f"{namespace}.{name}"


def _expand(node: Any, namespace: str, names: dict[str, dict[str, Any]]) -> Any:
    """Inline named references: define each named type at its first use, refer to it by full name after.

    That is the self-contained form Java's ``Schema.toString()`` writes into a file header.
    """
    if isinstance(node, str):
        if node in _PRIMITIVES:
            return node
        full = _full_name(node, namespace)
        if full in names:
            return full
        if full not in _AVSC:
            raise KeyError(f"Unknown Avro type {full!r}")
        return _expand(_AVSC[full], namespace, names)
    if isinstance(node, list):
        return [_expand(branch, namespace, names) for branch in node]
    kind = node["type"]
    if kind in _NAMED:
        full = _full_name(node["name"], node.get("namespace", namespace))
        if full in names:
            raise ValueError(f"Avro type {full} is defined twice")
        out = {k: v for k, v in node.items() if k not in ("namespace", "fields")}
        out["name"] = full
        names[full] = out  # registered before the fields so that recursive references resolve
        own_namespace = full.rsplit(".", 1)[0]
        if "fields" in node:
            out["fields"] = [
                {**f, "type": _expand(f["type"], own_namespace, names)} for f in node["fields"]
            ]
        return out
    if kind == "array":
        return {**node, "items": _expand(node["items"], namespace, names)}
    if kind == "map":
        return {**node, "values": _expand(node["values"], namespace, names)}
    if isinstance(kind, (list, dict)) or kind not in _PRIMITIVES:
        return {**node, "type": _expand(kind, namespace, names)}
    return node  # a primitive with attributes, e.g. {"name": "filePath", "type": "string"}


@lru_cache(maxsize=None)
def _resolved(model: AvroModel) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(self-contained schema, named types by full name) of one model; callers must not mutate them."""
    names: dict[str, dict[str, Any]] = {}
    return _expand(model.value, NAMESPACE, names), names


@lru_cache(maxsize=None)
def _parsed(model: AvroModel) -> dict[str, Any]:
    return fastavro.parse_schema(copy.deepcopy(_resolved(model)[0]))


def schema(model: AvroModel | str) -> dict[str, Any]:
    """The model's schema with every named type resolved, parsed for fastavro (a fresh copy).

    Args:
        model: an ``AvroModel`` or its full Avro name.

    Returns:
        A fastavro-parsed schema; named types are defined inline at first use, so it is self-contained.

    Example:
        >>> schema(AvroModel.CLUSTERING_PLAN)["name"]
        'org.apache.hudi.avro.model.HoodieClusteringPlan'
    """
    return fastavro.parse_schema(copy.deepcopy(_resolved(AvroModel(model))[0]))


# --------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------


def _nullable(node: Any) -> bool:
    return node == "null" or (isinstance(node, list) and "null" in node)


def _complete(node: Any, datum: Any, names: Mapping[str, dict[str, Any]], path: str) -> Any:
    """Copy of ``datum`` with absent fields set to their schema default; unknown fields raise.

    Type mismatches are left for fastavro's validator to report.
    """
    if isinstance(node, str):
        if node in _PRIMITIVES:
            return datum
        node = names[node]
    if isinstance(node, list):
        if datum is None:
            return None
        for branch in node:
            resolved = names.get(branch, branch) if isinstance(branch, str) else branch
            if not isinstance(resolved, dict):
                continue
            kind = resolved["type"]
            if (kind in ("record", "map") and isinstance(datum, Mapping)) or (
                kind == "array" and isinstance(datum, (list, tuple))
            ):
                return _complete(resolved, datum, names, path)
        return datum
    kind = node["type"]
    if kind == "record":
        if not isinstance(datum, Mapping):
            return datum
        fields = {f["name"]: f for f in node["fields"]}
        unknown = sorted(set(datum) - set(fields))
        if unknown:
            raise ValueError(f"{path}: unknown field(s) {', '.join(map(str, unknown))} for {node['name']}")
        out: dict[str, Any] = {}
        for name, f in fields.items():
            if name in datum:
                out[name] = _complete(f["type"], datum[name], names, f"{path}.{name}")
            elif "default" in f:
                out[name] = copy.deepcopy(f["default"])
            elif _nullable(f["type"]):
                out[name] = None  # as Java's GenericRecord would write an unset nullable field
            else:
                raise ValueError(f"{path}.{name} is required by {node['name']} and has no default")
        return out
    if kind == "array" and isinstance(datum, (list, tuple)):
        return [_complete(node["items"], x, names, f"{path}[{i}]") for i, x in enumerate(datum)]
    if kind == "map" and isinstance(datum, Mapping):
        return {k: _complete(node["values"], v, names, f"{path}[{k!r}]") for k, v in datum.items()}
    return datum


def serialize(model: AvroModel | str, record: Mapping[str, Any]) -> bytes:
    """Encode one record as Hudi does: an Avro object container file, codec null, schema embedded.

    Absent fields get their schema default (for example ``version`` becomes 1, which for a cleaner plan or
    clean metadata means Hudi's *version 1* layout: pass ``version=2`` when writing what Hudi 0.14 writes).

    Args:
        model: which record ``record`` is.
        record: the record as a plain dict; nested records are dicts too.

    Returns:
        The bytes of the instant file.

    Raises:
        ValueError: a field the schema does not know, a required field missing, or a value of the wrong type.

    Example:
        >>> data = serialize(AvroModel.ROLLBACK_PLAN,
        ...                  {"instantToRollback": {"commitTime": "20240101000000000", "action": "commit"}})
        >>> deserialize(AvroModel.ROLLBACK_PLAN, data)["version"]
        1
    """
    model = AvroModel(model)
    full_schema, names = _resolved(model)
    complete = _complete(full_schema, record, names, model.short_name)
    buf = io.BytesIO()
    try:
        fastavro.writer(buf, _parsed(model), [complete], codec="null", validator=True)
    except ValidationError as e:
        raise ValueError(f"Record is not a valid {model.short_name}: {e}") from e
    return buf.getvalue()


def deserialize(model: AvroModel | str, data: bytes, source: str | None = None) -> dict[str, Any]:
    """Read the single record of an Avro instant file, projected onto the 0.14 schema of ``model``.

    The writer schema embedded in ``data`` is honoured: fields a newer Hudi added are dropped, fields an
    older Hudi lacked get their defaults (Avro schema resolution). Like Hudi, only the first record is read.

    Args:
        model: which record the file must hold.
        data: the file's bytes.
        source: where ``data`` came from (e.g. the instant file name), named in error messages.

    Returns:
        The record as a plain dict.

    Raises:
        InvalidInstantError: ``data`` is empty, not an Avro container file, holds no record, or holds a
            different record type.

    Example:
        >>> deserialize(AvroModel.CLEANER_PLAN, b"", source="001.clean.requested")
        Traceback (most recent call last):
        ...
        hoodpy.errors.InvalidInstantError: Cannot read HoodieCleanerPlan from 001.clean.requested: the file is empty
    """
    model = AvroModel(model)
    where = f" from {source}" if source else ""
    prefix = f"Cannot read {model.short_name}{where}"
    if not data:
        raise InvalidInstantError(f"{prefix}: the file is empty")
    try:
        reader = fastavro.reader(io.BytesIO(data), reader_schema=_parsed(model))
        writer_name = reader.writer_schema.get("name") if isinstance(reader.writer_schema, dict) else None
        if writer_name != model.value:
            raise InvalidInstantError(f"{prefix}: it holds a {writer_name or 'non-record'} record")
        for record in reader:
            return record
    except InvalidInstantError:
        raise
    except Exception as e:  # fastavro reports corrupt input with many exception types (ValueError, EOFError, ...)
        raise InvalidInstantError(f"{prefix}: not a readable Avro container file ({type(e).__name__}: {e})") from e
    raise InvalidInstantError(f"{prefix}: the Avro file holds no record")


# --------------------------------------------------------------------------------------------------------
# Bare records (no container file), as log-file data blocks hold them
# --------------------------------------------------------------------------------------------------------


def schema_json(model: AvroModel | str) -> str:
    """The self-contained schema as JSON text (what Java's ``Schema.toString()`` puts in a block header)."""
    import json

    return json.dumps(_resolved(AvroModel(model))[0], separators=(",", ":"))


def encode_record(model: AvroModel | str, record: Mapping[str, Any]) -> bytes:
    """Avro binary encoding of one record (no header), defaults filled in as :func:`serialize` does."""
    model = AvroModel(model)
    full_schema, names = _resolved(model)
    complete = _complete(full_schema, record, names, model.short_name)
    buf = io.BytesIO()
    try:
        fastavro.schemaless_writer(buf, _parsed(model), complete)
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"Record is not a valid {model.short_name}: {e}") from e
    return buf.getvalue()


def decode_record(model: AvroModel | str, data: bytes, writer_schema: str | None = None) -> dict[str, Any]:
    """Decode one bare record written with ``writer_schema`` (JSON text; default: the model's own),
    projected onto the model's schema."""
    import json

    model = AvroModel(model)
    writer = fastavro.parse_schema(json.loads(writer_schema)) if writer_schema else _parsed(model)
    return fastavro.schemaless_reader(io.BytesIO(data), writer, _parsed(model))
