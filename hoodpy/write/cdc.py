"""The CDC log file a copy-on-write merge writes into a file group that had a base file, on tables with
``hoodie.table.cdc.enabled`` (Java's HoodieMergeHandle with its HoodieCDCLogger): one record per key the merge
changed: ``u`` for an updated row (before: the stored row, after: the row written), ``d`` for a deleted one,
``i`` for a record appended to the file group. New file groups get none: a reader infers their rows as
inserts from the write stat (Hudi's BASE_FILE_INSERT). Runs in executors.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.file_group.cdc_log import OP_DELETE, OP_INSERT, OP_UPDATE, cdc_record
from hoodpy.file_group.log_writer import avro_records, cdc_data_block
from hoodpy.file_group.markers import confirm_marked, create_marker, marker_path
from hoodpy.file_group.naming import cdc_log_file_name, join_partition
from hoodpy.storage import Storage


@dataclass(frozen=True)
class CdcWrite:
    """What a merge's CDC log needs from the driver: the table's mode and the CDC schema (JSON)."""

    mode: str
    schema_json: str


@dataclass(frozen=True)
class MergeChanges:
    """A merge's outcome per row: the stored rows (``old``), which were replaced (``replaced``, with the index of
    their update in ``new_rows`` in ``match``) or deleted, and the indices of ``new_rows`` appended as inserts."""

    old: pa.Table
    old_keys: pa.Array
    replaced: pa.Array
    deleted: pa.Array
    match: pa.Array
    new_rows: pa.Table
    new_keys: pa.Array
    inserted: pa.Array


def _images(rows: pa.Table, names: list[str]) -> list[dict]:
    return avro_records(rows.select(names))


def change_records(cdc: CdcWrite, changes: MergeChanges, data_names: list[str], instant_time: str) -> list[dict]:
    """The CDC records of a merge, in the order of the stored rows, then the inserts."""
    records = []
    updated = pc.indices_nonzero(changes.replaced)
    deleted = pc.indices_nonzero(changes.deleted)
    before = _images(changes.old.take(updated), data_names)
    after = _images(changes.new_rows.take(pc.take(changes.match, updated)), data_names)
    for key, b, a in zip(changes.old_keys.take(updated).to_pylist(), before, after, strict=True):
        records.append(cdc_record(cdc.mode, OP_UPDATE, key, instant_time, b, a))
    for key, b in zip(changes.old_keys.take(deleted).to_pylist(), _images(changes.old.take(deleted), data_names),
                      strict=True):
        records.append(cdc_record(cdc.mode, OP_DELETE, key, instant_time, b, None))
    inserted = changes.inserted.cast(pa.int64())
    for key, a in zip(changes.new_keys.take(inserted).to_pylist(),
                      _images(changes.new_rows.take(inserted), data_names), strict=True):
        records.append(cdc_record(cdc.mode, OP_INSERT, key, instant_time, None, a))
    return records


def write_cdc_log(storage: Storage, cdc: CdcWrite, partition_path: str, file_id: str, token: str,
                  instant_time: str, records: list[dict]) -> dict[str, int]:
    """Write the merge's CDC log file (marked first, so a rollback finds it); its ``cdcStats`` entry."""
    name = cdc_log_file_name(file_id, instant_time, token)
    rel = join_partition(partition_path, name)
    data = cdc_data_block(records, instant_time, cdc.schema_json)
    create_marker(storage, instant_time, partition_path, name)
    storage.write_bytes(rel, data)
    confirm_marked(storage, marker_path(instant_time, partition_path, name), [rel])
    return {rel: len(data)}
