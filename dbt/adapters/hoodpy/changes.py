"""``hoodpy_changes(ref('rides'))``: an incremental model reads only what its upstream hoodpy table committed
since the model last consumed it, with the consumed instant kept in the model's own commits.

The checkpoint. Each upstream has a key in the model's commit extraMetadata,
``<prefix>hoodpy.changes.<schema>.<table>`` (prefix: ``hoodie.datasource.write.commitmeta.key.prefix``,
default ``_``), whose value is the upstream instant the model has consumed up to. It is written by the
commit that writes the model's rows (the CTAS of a first or full-refresh run, the upsert of an incremental
run: one commit, through the write options), so a run that fails before its commit leaves the checkpoint
where it was and the next run reads the same window again, and a run that commits never reads it again.
The current value is the newest committed one (:meth:`hoodpy.timeline.timeline.Timeline.latest_extra_metadata`).

Which instant. When the model's SQL is rendered, before anything is read, the end of the window is chosen:
the upstream's newest completed write (its completion time in table versions 8/9, its instant time in
version 6, as incremental windows are selected there), but, in version 6, only among writes older than the
oldest pending write (a pending write would complete later with an instant time inside the window already
consumed: Hudi's "hollow commit", handled as its BLOCK policy). Pending clusterings do not count: they
write no new commit times. The read is bounded by that end, so what commits while the model runs is read
next time.

What is read. An incremental run with a checkpoint S reads ``hudi_table_changes(upstream, 'latest_state',
S, E)``: the latest version of every record committed in (S, E] (a hard delete in the upstream is not
seen: upstreams that must propagate deletes keep them as rows with a delete flag). A first or full-refresh
run, or an incremental run without a checkpoint (a model that just started using the macro), reads the
upstream as of E (``TIMESTAMP AS OF``). A model that is not incremental reads the upstream itself.

With ``format='cdc'`` (an upstream with ``hoodie.table.cdc.enabled``) the call reads change data capture rows
(``op``, ``ts_ms``, ``before``, ``after``: one per change, deletes included) with the same checkpoint:
``hudi_table_changes(upstream, 'cdc', S, E)`` on an incremental run, every change up to E (from ``earliest``) on
a first or full-refresh run, and every change up to now in a model that is not incremental.

The registry. Rendering happens before the materialization writes, so the adapter keeps, per model, the
windows its last rendering chose; the write takes those whose rendered text is in the model's compiled SQL
(a stale entry of an earlier rendering never reaches a commit).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hoodpy.config import HoodieConfig
from hoodpy.config.read import CDC, EARLIEST, LATEST_STATE
from hoodpy.config.write import WriteConfig
from hoodpy.errors import HoodieError, InvalidConfigError
from hoodpy.services.clustering.plan import clustering_instants
from hoodpy.timeline.instant import LAYOUT_1
from sql_ext.catalog import sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hoodpy.table import HoodieTable

KEY_NAME = "hoodpy.changes."
FUNCTION = "hudi_table_changes"


@dataclass(frozen=True)
class Window:
    """What one ``hoodpy_changes`` call reads: the upstream's changes in (start, end]; start None reads the
    upstream as of end (all of it)."""

    upstream: str  # schema.table
    key: str  # the checkpoint's extraMetadata key
    start: str | None
    end: str | None  # None: the upstream has no completed write yet
    sql: str  # what the call rendered
    format: str = LATEST_STATE  # or CDC: change data capture rows

    @property
    def full(self) -> bool:
        return self.start is None

    def describe(self) -> str:
        what = f"{self.upstream} changes (cdc)" if self.format == CDC else self.upstream
        if self.end is None:
            return f"{what} (no commit yet)"
        if self.full:
            return f"{what} up to {self.end}" if self.format == CDC else f"{what} as of {self.end}"
        return f"{what} ({self.start}, {self.end}]"


def checkpoint_key(prefix: str, upstream: str) -> str:
    return f"{prefix}{KEY_NAME}{upstream}"


def key_prefix(options: dict[str, str]) -> str:
    """The commit-metadata key prefix a model writes with; an empty prefix would store no checkpoint."""
    option = WriteConfig.COMMIT_METADATA_KEY_PREFIX
    prefix = HoodieConfig.of(options).get(option)
    if not prefix:
        raise InvalidConfigError(option.key, prefix, "hoodpy_changes keeps its checkpoint in the model's commit "
                                 "metadata under this prefix: it must not be empty")
    return prefix


def consumable_end(table: HoodieTable) -> str | None:
    """The newest instant an incremental reader can consume up to now without missing a commit that
    completes later (see the module docstring); None when the table has no completed write."""
    timeline = table.timeline
    writes = timeline.completed_commits()
    if timeline.layout == LAYOUT_1:
        clusterings = {i.timestamp for i, _ in clustering_instants(table.storage, timeline)}
        holes = [i.timestamp for i in timeline.pending_writes() if i.timestamp not in clusterings]
        if holes:
            writes = [i for i in writes if i.timestamp < min(holes)]
    return max((i.completed_at for i in writes), default=None)


def check_checkpoint(table: HoodieTable, upstream: str, start: str, end: str | None) -> None:
    """The consumed instant must still be part of the upstream: a rollback or restore of a commit the model
    already read leaves the model holding rows the upstream no longer has, which no change read can undo."""
    timeline = table.timeline
    writes = timeline.completed_commits()
    known = {i.completed_at for i in writes}
    first = writes[0].timestamp if writes else None
    if start in known or (first is not None and start < first):
        return
    raise HoodieError(f"upstream {upstream} no longer has the commit {start} this model consumed up to (it "
                      f"was rolled back or the table was restored; newest readable commit: {end}): rebuild "
                      "the model with --full-refresh")


def changes_sql(upstream: str, end: str | None, start: str | None, fmt: str = LATEST_STATE) -> str:
    """The relation a call renders: the changes in (start, end], or the upstream as of end (with ``cdc``:
    every change up to end)."""
    if fmt == CDC:
        bounds = (start or EARLIEST,) + ((end,) if end is not None else ())
        return f"{FUNCTION}({sql_string(upstream)}, '{CDC}', {', '.join(sql_string(b) for b in bounds)})"
    if end is None:
        return f"(SELECT * FROM {upstream})"
    if start is None:
        return f"(SELECT * FROM {upstream} TIMESTAMP AS OF {sql_string(end)})"
    return f"{FUNCTION}({sql_string(upstream)}, 'latest_state', {sql_string(start)}, {sql_string(end)})"


class ChangesRegistry:
    """Per model (unique id), the windows its last rendering chose, keyed by checkpoint key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[str, dict[str, Window]] = {}

    def put(self, model_id: str, window: Window) -> None:
        with self._lock:
            self._windows.setdefault(model_id, {})[window.key] = window

    def reads(self, model: dict[str, Any]) -> bool:
        """Whether the model's compiled SQL reads windows of its last rendering."""
        code = str(model.get("compiled_code") or "")
        with self._lock:
            return any(w.sql in code for w in self._windows.get(str(model.get("unique_id")), {}).values())

    def take(self, model: dict[str, Any]) -> list[Window]:
        """The model's windows its compiled SQL reads (removed from the registry)."""
        code = str(model.get("compiled_code") or "")
        with self._lock:
            windows = self._windows.pop(str(model.get("unique_id")), {})
        return [w for w in windows.values() if w.sql in code]


def checkpoint_options(windows: list[Window]) -> dict[str, str]:
    """The write options that store the windows' ends in the model's commit."""
    return {w.key: w.end for w in windows if w.end is not None}


def records_read(spark: SparkSession, window: Window) -> int:
    """How many records the window holds, read as the model reads them (through the SQL layer)."""
    return int(spark.sql(f"SELECT count(*) AS n FROM {window.sql} AS __hoodpy_window").collect()[0]["n"])
