"""The contract every table service follows (clean, clustering, rollback, restore, archive; compaction next).

A service is built from a :class:`ServiceContext` (storage, config, the table when Spark work is needed) and
offers the same three steps, with the same argument order:

* ``schedule(options=None, *, instant_time=None, ...) -> plan | None``: plan and persist the plan as the
  ``.requested`` instant, as Hudi does; None (and no instant) when there is nothing to do.
* ``execute(plan_or_instant_time, *, options=None) -> result``: move the instant to inflight, do the work and
  complete it. It never re-plans, so running it again after a crash resumes the same plan.
* ``run(options=None, ...)``: schedule, then execute.

Locking is the writers' own: :meth:`ServiceContext.transaction` is a
:class:`~hoodpy.transaction.transaction.WriteTransaction`, whose ``locked()`` holds the table lock under
optimistic concurrency and nothing for a single writer. Clean and clustering take it in ``schedule`` (planning
reads a timeline it must not race) and clustering again to complete; rollback, restore and archival, which
take instants away, hold it across the whole ``run`` instead, and their ``schedule`` / ``execute`` expect the
caller to hold it (as the write transaction does when it rolls back failed writes).

``plan(instant_time)`` reads a saved plan back, ``pending()`` lists the plans not completed yet (oldest first)
and ``finish_pending()`` executes them.

Example:
    >>> service = CleanService.of(table)
    >>> plan = service.schedule({"hoodie.cleaner.commits.retained": "2"})
    >>> service.execute(plan.instant_time).total_files_deleted
    4
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from hoodpy.config import HoodieConfig
from hoodpy.config.registry import check_options
from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.errors import UnsupportedServiceError
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_1, Action
from hoodpy.timeline.timeline import Timeline, layout_of
from hoodpy.transaction.transaction import WriteTransaction

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

Options = Mapping[str, Any] | HoodieConfig | None
PlanT = TypeVar("PlanT")
ResultT = TypeVar("ResultT")


def _layer(options: Options) -> Mapping[str, Any] | None:
    if isinstance(options, HoodieConfig):
        return options.options  # a table's config: its options were checked when they were given
    check_options(options)
    return options


@dataclass(frozen=True)
class ServiceContext:
    """What a table service works on: the table's storage and config, and the table itself when the service
    moves data with Spark (clustering) or needs the table's schema."""

    storage: Storage
    config: HoodieConfig
    table: HoodieTable | Any | None = None

    @classmethod
    def of(cls, target: HoodieTable | Storage | ServiceContext | Any, options: Options = None) -> ServiceContext:
        """The context of a table (its options apply), of a bare Storage, or another context; ``options``
        are merged on top."""
        if isinstance(target, ServiceContext):
            return target.with_options(options)
        if isinstance(target, Storage):
            return cls(target, HoodieConfig.of(_layer(options)))
        base = getattr(target, "config", None)  # a HoodieTable, or anything with .storage and .config
        config = base.with_options(_layer(options)) if base is not None else HoodieConfig.of(_layer(options))
        return cls(target.storage, config, target)

    def with_options(self, options: Options) -> ServiceContext:
        if not options:
            return self
        return ServiceContext(self.storage, self.config.with_options(_layer(options)), self.table)

    @property
    def name(self) -> str:
        """The table's name for messages (its base path when only storage is known)."""
        return getattr(self.table, "name", None) or self.storage.base_uri

    def timeline(self) -> Timeline:
        """A fresh load of the active timeline."""
        return Timeline.load(self.storage)

    def transaction(self, *, merge_on_read: bool = False) -> WriteTransaction:
        """The writers' transaction for this config: ``locked()`` is the table lock under OCC.
        ``merge_on_read``: the caller handles log files, so merge-on-read tables are not refused."""
        return WriteTransaction(self.storage, self.config, merge_on_read=merge_on_read)

    def require_table_version_6(self, service: str) -> None:
        """Raise UnsupportedServiceError unless the table has timeline layout 1 (table version 6): the
        services other than rollback and clean write layout-1 instants and plans only."""
        props = load_table_properties(self.storage) or {}
        if layout_of(props) != LAYOUT_1:
            version = props.get(TableConfig.VERSION.key, "?")
            raise UnsupportedServiceError(self.storage.base_uri, service.capitalize(),
                                          f"{version} (Hudi 1.x timeline layout 2)")


def instant_time_of_plan(plan: Any) -> str:
    """A plan's instant time; ``execute`` takes either the plan or its instant time."""
    return plan if isinstance(plan, str) else plan.instant_time


class TableService(ABC, Generic[PlanT, ResultT]):
    """schedule / execute / run over one table (see the module docstring)."""

    action: ClassVar[Action | None]  # the timeline action of the service's instants (archival has none)
    run_holds_lock: ClassVar[bool] = False  # see run()
    # Whether the service also runs on table versions 8 and 9 (timeline layout 2); those that do not refuse
    # such tables when built, before touching them.
    supports_table_version_8: ClassVar[bool] = False
    # Whether the service handles merge-on-read file slices (log files); those that do not refuse such tables
    # when they take the table's transaction.
    supports_merge_on_read: ClassVar[bool] = False

    def __init__(self, context: ServiceContext):
        self.context = context
        if not self.supports_table_version_8:
            context.require_table_version_6(type(self).__name__.removesuffix("Service").lower())

    @classmethod
    def of(cls, target: HoodieTable | Storage | ServiceContext | Any, options: Options = None):
        return cls(ServiceContext.of(target, options))

    @property
    def storage(self) -> Storage:
        return self.context.storage

    def _context(self, options: Options) -> ServiceContext:
        return self.context.with_options(options)

    def _transaction(self, context: ServiceContext) -> WriteTransaction:
        """``context``'s transaction, refusing merge-on-read tables unless the service handles them."""
        return context.transaction(merge_on_read=self.supports_merge_on_read)

    @abstractmethod
    def schedule(self, options: Options = None, *, instant_time: str | None = None) -> PlanT | None:
        """Plan and persist the plan as a requested instant; None when there is nothing to do."""

    @abstractmethod
    def execute(self, plan: PlanT | str, *, options: Options = None) -> ResultT:
        """Run a saved plan (given, or by its instant time) to completion; resumes a crashed attempt."""

    @abstractmethod
    def plan(self, instant_time: str) -> PlanT:
        """The plan saved at ``instant_time``."""

    def run(self, options: Options = None, **schedule_args: Any) -> ResultT | None:
        """Schedule (with ``schedule_args``), then execute what was scheduled; None when there was nothing to do.

        With ``run_holds_lock`` the table lock is held across both, for services whose plan must not go
        stale before it runs (they take commits or instants away and check nothing when completing).
        """
        guard = self._transaction(self._context(options)).locked() if self.run_holds_lock else nullcontext()
        with guard:
            plan = self.schedule(options, **schedule_args)
            return self.execute(plan, options=options) if plan is not None else None

    def pending_instant_times(self) -> list[str]:
        """Instants of this service that are requested or inflight, oldest first."""
        return [i.timestamp for i in self.context.timeline().pending([self.action])]

    def pending(self) -> list[PlanT]:
        """Plans not completed yet, oldest first."""
        return [self.plan(t) for t in self.pending_instant_times()]

    def finish_pending(self, options: Options = None) -> list[ResultT]:
        """Execute the plans an earlier run left requested or inflight (a crash), oldest first."""
        return [self.execute(t, options=options) for t in self.pending_instant_times()]
