"""Write operations and what each one does on the timeline."""

from __future__ import annotations

from enum import Enum

from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import OperationType


class WriteOperation(str, Enum):
    INSERT = "insert"
    UPSERT = "upsert"
    BULK_INSERT = "bulk_insert"
    DELETE = "delete"
    INSERT_OVERWRITE = "insert_overwrite"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"
    DELETE_PARTITION = "delete_partition"

    @property
    def operation_type(self) -> str:
        """The Java WriteOperationType name recorded in commit metadata."""
        return getattr(OperationType, self.name)

    @property
    def action(self) -> Action:
        return Action.REPLACECOMMIT if self.replaces else Action.COMMIT

    def action_on(self, merge_on_read: bool) -> Action:
        """The timeline action of this operation on a table of the type: a merge-on-read table records its
        writes as deltacommits, its overwrites and partition deletes as replacecommits (as Hudi does)."""
        return Action.DELTACOMMIT if merge_on_read and not self.replaces else self.action

    @property
    def replaces(self) -> bool:
        """Replaces file groups (a replacecommit): the overwrites, and delete_partition, which writes no file."""
        return self.is_overwrite or self == WriteOperation.DELETE_PARTITION

    @property
    def is_overwrite(self) -> bool:
        return self in (WriteOperation.INSERT_OVERWRITE, WriteOperation.INSERT_OVERWRITE_TABLE)

    @property
    def uses_index(self) -> bool:
        """Upserts and deletes look keys up; inserts and overwrites write without a lookup, as in Hudi."""
        return self in (WriteOperation.UPSERT, WriteOperation.DELETE)

    @property
    def packs_small_files(self) -> bool:
        return self in (WriteOperation.INSERT, WriteOperation.UPSERT)
