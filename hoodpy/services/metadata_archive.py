"""Archival of the metadata table's own timeline, after each write right after the data table's
(``hoodie.archive.automatic``), under the data table's lock: Java archives it with the metadata table's write
client at the end of every performTableServices.

The instants are those :func:`hoodpy.services.archive.instants_to_archive` picks on the metadata table, a
merge-on-read table, with Java's metadata write config (HoodieMetadataWriteUtils.createMetadataWriteConfig):

* keep at least the larger of ``hoodie.metadata.keep.min.commits`` and ``hoodie.keep.min.commits`` instants,
  start past the larger of the two ``max`` keys;
* not at or after its last clean's earliest retained instant, nor the deltacommits its compaction trigger
  counts (NUM_COMMITS, ``hoodie.metadata.compact.max.delta.commits``);
* not at or after the data table's first commit, deltacommit or replacecommit on its active timeline, nor its
  oldest pending instant (Java's TimelineUtils.getEarliestInstantForMetadataArchival: a rollback of a data
  instant still finds its metadata deltacommit);
* hoodpy also keeps the latest compaction on the active timeline (readers then never need the archive to know
  the newest base files committed; older ones count as committed anyway, being older than the timeline).

Archived instants go where the table version puts them: an archive log file under the metadata table's
``.hoodie/archived`` (version 6) or its LSM history (versions 8 and 9).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hoodpy.config import HoodieConfig
from hoodpy.config.clean import ArchivalConfig
from hoodpy.config.compaction import NUM_COMMITS, CompactionConfig
from hoodpy.config.metadata import MetadataConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.metadata_table.layout import metadata_storage
from hoodpy.services.archive import (
    ArchivePlan, ArchiveResult, ArchiveService, archival_due, archive_instants, instants_to_archive,
)
from hoodpy.services.compaction.trigger import oldest_instant_to_retain_for_compaction
from hoodpy.services.table_service import Options, ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.timeline import Timeline, layout_of

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

_DATA_COMMITS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT)


def metadata_archival_config(config: HoodieConfig) -> HoodieConfig:
    """The data table's config as the metadata table's archival reads it."""
    return config.with_options({
        ArchivalConfig.MIN_COMMITS.key: str(max(config.get(MetadataConfig.KEEP_MIN_COMMITS),
                                                config.get(ArchivalConfig.MIN_COMMITS))),
        ArchivalConfig.MAX_COMMITS.key: str(max(config.get(MetadataConfig.KEEP_MAX_COMMITS),
                                                config.get(ArchivalConfig.MAX_COMMITS))),
        CompactionConfig.INLINE_TRIGGER_STRATEGY.key: NUM_COMMITS,
        CompactionConfig.INLINE_MAX_DELTA_COMMITS.key: str(config.get(MetadataConfig.COMPACT_MAX_DELTA_COMMITS)),
    })


def metadata_archival_bounds(data_storage: Storage, timeline: Timeline, config: HoodieConfig) -> list[str]:
    """Instants of the metadata table at or after which nothing is archived (see the module docstring)."""
    data = Timeline.load(data_storage)
    bounds = [i.timestamp for i in data.filter(actions=_DATA_COMMITS)][:1]
    bounds += [i.timestamp for i in data.instants if not i.is_completed][:1]
    compactions = timeline.filter(actions=[Action.COMMIT], states=[State.COMPLETED])
    bounds += [c.timestamp for c in compactions[-1:]]
    oldest = oldest_instant_to_retain_for_compaction(timeline, config.get(CompactionConfig.INLINE_MAX_DELTA_COMMITS))
    return bounds + ([oldest] if oldest else [])


class MetadataTableArchiveService(ArchiveService):
    """Archival of the metadata table of the context's table (the context's lock and options)."""

    def _metadata(self, options: Options) -> tuple[Storage, HoodieConfig, Timeline] | None:
        context = self._context(options)
        meta = metadata_storage(context.storage)
        props = load_table_properties(meta)
        if props is None:
            return None
        return meta, metadata_archival_config(context.config), Timeline.load(meta, layout_of(props))

    def schedule(self, options: Options = None, *, instant_time: str | None = None) -> ArchivePlan | None:
        found = self._metadata(options)
        if found is None:
            return None
        meta, config, timeline = found
        chosen = instants_to_archive(meta, timeline, config,
                                     metadata_archival_bounds(self._context(options).storage, timeline, config))
        return ArchivePlan(tuple(chosen)) if chosen else None

    def execute(self, plan: ArchivePlan | str, *, options: Options = None) -> ArchiveResult:
        if isinstance(plan, str):
            return super().execute(plan, options=options)  # refuses: archival has no saved plans
        meta = metadata_storage(self._context(options).storage)
        return archive_instants(meta, metadata_archival_config(self._context(options).config), list(plan.instants))

    def run_if_due(self, options: Options = None) -> ArchiveResult | None:
        """Archive when the metadata table's timeline holds more than the max instants of an action group (a
        listing only otherwise)."""
        found = self._metadata(options)
        if found is None:
            return None
        _, config, timeline = found
        return self.run(options) if archival_due(timeline, config) else None


def archive_metadata_table_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None,
                                        ) -> ArchiveResult | None:
    """``hoodie.archive.automatic``: archive the metadata table's timeline after each write (cheap when nothing
    qualifies: one listing)."""
    context = ServiceContext.of(table, options)
    if not context.config.get(ArchivalConfig.AUTOMATIC):
        return None
    return MetadataTableArchiveService(context).run_if_due()
