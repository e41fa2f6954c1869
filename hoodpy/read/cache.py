"""Snapshot reads planned once per table state: what the SQL layer reads for each hoodpy table reference.

A read plans from the timeline, the listing of base files, the schema and (for filters) footer statistics,
then builds a DataFrame over the chosen files. All of that is fixed by the files under ``.hoodie/``: every
change that alters what a reader sees (a commit, replacecommit, clean, rollback, restore, archival, a
``hoodie.properties`` update) adds, removes or rewrites one of them. So each read lists ``.hoodie/`` (one
listing call) and, when that listing equals the cached one, reuses the timeline, the base-file listing,
the file-system views and the schemas; a DataFrame is reused whenever a read selects the same files
with the same schema. A query after another
writer's commit sees a different listing and plans afresh. Footer statistics are cached by file path in
:mod:`hoodpy.read.data_skipping` (base files never change once written).

The listing of ``.hoodie/`` comes before the listing of base files, as :meth:`HoodieTable.file_system_view`
does: files a commit wrote are on storage before its completed instant is.

Reusing a DataFrame is safe because it only names immutable files and a schema; Spark analyses and
optimises the query around it (session confs included) on each use. The cache is per SQL layer, i.e. per
session, and bounded.

It plans through the table facade's schemas and the cleaner's retention rule, so among the layers
(``tests/unit/test_layers.py``) it sits with :mod:`hoodpy.table`, above the table services.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hoodpy.config.table import COPY_ON_WRITE, TableConfig
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import FileSystemView, table_base_files
from hoodpy.read.file_scan import read_parquet_files
from hoodpy.read.query import Filter, bind_filters, select_files, snapshot
from hoodpy.read.written_types import written_schemas
from hoodpy.services.clean.retention import check_retained
from hoodpy.timeline.instant import timeline_folder, validate_instant_time
from hoodpy.timeline.timeline import Timeline, layout_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from hoodpy.table import HoodieTable

MAX_TABLES = 64
MAX_FRAMES = 128


@dataclass
class TableState:
    """What reads of one table plan from while its ``.hoodie/`` listing stays ``fingerprint``."""

    fingerprint: tuple
    timeline: Timeline
    base_files: list[BaseFile]
    views: dict[str | None, FileSystemView] = field(default_factory=dict)
    schemas: dict[str | None, tuple[pa.Schema | None, StructType]] = field(default_factory=dict)

    def view(self, table: HoodieTable, as_of: str | None) -> FileSystemView:
        if as_of not in self.views:
            if as_of is not None:
                check_retained(table.storage, self.timeline, as_of)  # raises: not cached
            self.views[as_of] = FileSystemView(self.timeline, self.base_files, as_of)
        return self.views[as_of]

    def schema(self, table: HoodieTable, as_of: str | None) -> tuple[pa.Schema | None, StructType]:
        """(data schema, read schema with meta columns) of the newest commit at or before ``as_of``."""
        if as_of not in self.schemas:
            self.schemas[as_of] = (table.arrow_schema(timeline=self.timeline, as_of=as_of),
                                   table.spark_schema(as_of=as_of, timeline=self.timeline))
        return self.schemas[as_of]


class SnapshotCache:
    """Per-session cache of planned snapshot reads (see the module docstring)."""

    def __init__(self, max_tables: int = MAX_TABLES, max_frames: int = MAX_FRAMES):
        self.max_tables = max_tables
        self.max_frames = max_frames
        self._states: OrderedDict[str, TableState] = OrderedDict()
        self._frames: OrderedDict[tuple, DataFrame] = OrderedDict()
        self._lock = threading.Lock()  # dbt runs models on threads that share one session

    def state(self, table: HoodieTable) -> TableState:
        """The table's current state: one listing of ``.hoodie/``, more work only when it changed."""
        layout = layout_of(table.properties)
        listing = table.storage.list_files(timeline_folder(layout))
        fingerprint = tuple(sorted((f.path, f.size, f.mtime_ns) for f in listing))
        key = str(table.base_path)
        with self._lock:
            state = self._states.get(key)
        if state is None or state.fingerprint != fingerprint:
            timeline = Timeline.from_listing(table.storage, listing, layout)
            state = TableState(fingerprint, timeline, table_base_files(table.storage, timeline))
        self._remember(self._states, key, state, self.max_tables)
        return state

    def _remember(self, cache: OrderedDict, key: Any, value: Any, limit: int) -> None:
        with self._lock:
            cache[key] = value
            cache.move_to_end(key)
            while len(cache) > limit:
                cache.popitem(last=False)

    def snapshot(self, table: HoodieTable, *, as_of: str | None = None, filters: Sequence[Filter] = (),
                 state: TableState | None = None) -> DataFrame:
        """The rows of the files ``filters`` may match as of ``as_of`` (unfiltered: the caller's query
        applies its WHERE), as :func:`hoodpy.read.query.snapshot` with ``apply_filters=False`` reads them.
        ``state``: one :meth:`state` the caller already took (it saves a listing)."""
        if table.properties.get(TableConfig.TYPE.key, COPY_ON_WRITE) != COPY_ON_WRITE:
            # Log files are not part of the cached listing: merge-on-read reads plan afresh.
            return snapshot(table, as_of=as_of, filters=filters, apply_filters=False)
        if as_of is not None:
            validate_instant_time(as_of)
        state = state or self.state(table)
        arrow_schema, schema = state.schema(table, as_of)
        bound = bind_filters(filters, schema)
        view = state.view(table, as_of)
        files = select_files(table, view.latest_base_files(), bound, arrow_schema, view.timeline)
        paths = tuple(bf.path for bf in files)
        key = (str(table.base_path), paths, schema.json())  # the files are immutable: no state needed
        with self._lock:
            df = self._frames.get(key)
        if df is None:
            df = read_parquet_files(table.spark, table.storage, paths, schema,
                                    written=written_schemas(state.timeline, files, schema))
        self._remember(self._frames, key, df, self.max_frames)
        return df

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
            self._frames.clear()
