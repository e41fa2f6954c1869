"""Unit-test helpers shared across packages: a table of table version 8 (timeline layout 2) on local
storage, and plain commits written into any table's timeline."""

from hoodpy.config.properties import save_table_properties
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat


def v8_table_storage(path) -> Storage:
    """Storage of an empty table of version 8: properties and the .hoodie/timeline folder."""
    s = Storage(str(path))
    s.mkdirs(".hoodie/timeline/history")
    save_table_properties(s, {"hoodie.table.name": "t", "hoodie.table.version": "8",
                              "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline"})
    return s


def write_commit(storage, t, fid, *, complete=True, partition="p"):
    """A commit at ``t`` writing one base file of file group ``fid`` (left inflight unless ``complete``), in
    the table's timeline layout; returns (its last instant, the base file's path)."""
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, Action.COMMIT))
    path = f"{partition}/{fid}_0-1-1_{t}.parquet"
    storage.write_bytes(path, b"data")
    if complete:
        meta = CommitMetadata(OperationType.UPSERT)
        meta.add_write_stat(WriteStat(fid, path, partition, num_writes=1))
        inflight = transitions.complete(storage, inflight, meta.to_bytes(inflight.layout))
    return inflight, path
