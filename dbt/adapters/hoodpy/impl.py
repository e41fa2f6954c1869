"""HoodpyAdapter: dbt-spark's adapter with hoodpy tables. Macros stay thin; they call the ``@available``
methods here for model config, strategy choice, writes and table services."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Union

from dbt.adapters.base import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt_common.exceptions import DbtRuntimeError

from hoodpy.errors import HoodieError
from hoodpy.meta_fields import META_COLUMNS
from sql_ext.catalog import create_options_sql

from dbt.adapters.hoodpy.changes import ChangesRegistry, checkpoint_options
from dbt.adapters.hoodpy.connections import HoodpyConnectionManager
from dbt.adapters.hoodpy.model_config import HOODPY_STRATEGIES, TableSpec, incremental_strategy, table_spec
from dbt.adapters.hoodpy.relation import HoodpyRelation
from dbt.adapters.hoodpy.session import hoodpy_session

if TYPE_CHECKING:
    from dbt.adapters.spark.column import SparkColumn

_TABLE_PROPERTIES = re.compile(r"^Table Properties: \[(.*)\]$", re.MULTILINE)
# Table properties shown in `dbt docs` (catalog stats) for hoodpy tables: Hudi's names.
_CATALOG_STATS = (
    ("primaryKey", "record key", "Hudi record key field(s)"),
    ("preCombineField", "precombine field", "Hudi ordering field: the larger value wins"),
    ("hoodie.base.path", "base path", "Where the Hudi table lives"),
    ("hoodie.index.type", "index type", "hoodie.index.type"),
    ("hoodie.layout.optimize.strategy", "clustering layout", "hoodie.layout.optimize.strategy"),
    ("hoodie.clustering.plan.strategy.sort.columns", "clustering columns",
     "hoodie.clustering.plan.strategy.sort.columns"),
    ("hoodie.cleaner.policy", "clean policy", "hoodie.cleaner.policy"),
)


@dataclass
class HoodpyConfig(SparkConfig):
    precombine_key: Optional[str] = None
    index_type: Optional[str] = None
    hoodie_options: Optional[Dict[str, Any]] = None
    clustering: Optional[Dict[str, Any]] = None
    compaction: Optional[Dict[str, Any]] = None
    clean: Optional[Dict[str, Any]] = None
    delete_column: Optional[str] = None


def _node_name(model: Any) -> str:
    return str(model.get("alias") or model.get("name")) if isinstance(model, dict) else str(model)


def _config_error(model: Any, error: Exception) -> DbtRuntimeError:
    return DbtRuntimeError(f"hoodpy config error in {model.get('resource_type', 'model')} "
                           f"'{_node_name(model)}': {error}")


class HoodpyAdapter(SparkAdapter):
    Relation = HoodpyRelation  # type: ignore[assignment]
    ConnectionManager = HoodpyConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = HoodpyConfig  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any = None) -> None:
        super().__init__(config, mp_context)
        self._changes = ChangesRegistry()
        creds = config.credentials
        if getattr(creds, "project_root", None) is None and getattr(config, "project_root", None):
            creds.project_root = config.project_root

    @classmethod
    def type(cls) -> str:
        return "hoodpy"

    def valid_incremental_strategies(self) -> List[str]:
        return list(HOODPY_STRATEGIES)

    # -- relations and columns ----------------------------------------------------------------------
    def _build_spark_relation_list(self, row_list: Any, relation_info_func: Any) -> List[BaseRelation]:
        relations = super()._build_spark_relation_list(row_list, relation_info_func)
        return [r.incorporate(is_hoodpy=HoodpyRelation.information_is_hoodpy(r.information or ""))
                for r in relations]

    def parse_columns_from_information(self, relation: BaseRelation) -> List["SparkColumn"]:
        return [c for c in super().parse_columns_from_information(relation) if c.name not in META_COLUMNS]

    def get_columns_in_relation(self, relation: BaseRelation) -> List["SparkColumn"]:
        return [c for c in super().get_columns_in_relation(relation) if c.name not in META_COLUMNS]

    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[Dict[str, Any]]:
        stats = self._hoodpy_catalog_stats(relation)
        for row in super()._get_columns_for_catalog(relation):
            row.update(stats)
            yield row

    @staticmethod
    def _hoodpy_catalog_stats(relation: BaseRelation) -> Dict[str, Any]:
        information = getattr(relation, "information", None) or ""
        if not HoodpyRelation.information_is_hoodpy(information):
            return {}
        match = _TABLE_PROPERTIES.search(information)
        props = dict(p.split("=", 1) for p in match.group(1).split(", ") if "=" in p) if match else {}
        stats: Dict[str, Any] = {"stats:format:label": "format", "stats:format:value": "hoodpy (Hudi COW v6)",
                                 "stats:format:description": "Table format", "stats:format:include": True}
        for key, label, description in _CATALOG_STATS:
            if key in props:
                sid = label.replace(" ", "_")
                stats.update({f"stats:{sid}:label": label, f"stats:{sid}:value": props[key],
                              f"stats:{sid}:description": description, f"stats:{sid}:include": True})
        return stats

    @available
    def hoodpy_meta_columns(self) -> List[str]:
        """Hudi's _hoodie_* meta columns: part of a hoodpy table's reads, never of a model's columns."""
        return list(META_COLUMNS)

    # -- model config ---------------------------------------------------------------------------------
    def _spec(self, model: Dict[str, Any], record_key: Optional[List[str]] = None) -> TableSpec:
        try:
            return table_spec(_node_name(model), model.get("config") or {},
                              resource_type=model.get("resource_type", "model"), record_key=record_key)
        except HoodieError as e:
            raise _config_error(model, e) from e

    @available
    def hoodpy_table_spec(self, model: Dict[str, Any], columns: Optional[List[str]] = None,
                          record_key: Optional[List[str]] = None) -> Dict[str, Any]:
        """The table a node's config asks for, validated (against the query's ``columns`` when given)."""
        spec = self._spec(model, record_key)
        if columns is not None:
            try:
                spec.check_columns([getattr(c, "name", c) for c in columns])
            except HoodieError as e:
                raise _config_error(model, e) from e
        return {"file_format": spec.file_format, "is_hoodpy": spec.is_hoodpy,
                "properties": spec.table_properties() if spec.is_hoodpy else {},
                "partition_by": list(spec.partition_by), "delete_column": spec.delete_column,
                "record_key": list(spec.record_key)}

    @available
    def hoodpy_create_options(self, spec: Dict[str, Any]) -> str:
        """``using hoodpy partitioned by (...) tblproperties (...)`` of a model's or seed's ``create table``,
        for a :meth:`hoodpy_table_spec`."""
        return create_options_sql(spec["partition_by"], spec["properties"])

    @available
    def hoodpy_incremental_strategy(self, model: Dict[str, Any]) -> str:
        spec = self._spec(model)
        try:
            return incremental_strategy(spec, (model.get("config") or {}).get("incremental_strategy"))
        except HoodieError as e:
            raise _config_error(model, e) from e

    # -- writes and table services ---------------------------------------------------------------------
    def _spark(self) -> Any:
        return hoodpy_session(self.config.credentials)

    @available
    def hoodpy_write(self, target: BaseRelation, source: BaseRelation, strategy: str, model: Dict[str, Any],
                     columns: Optional[List[str]] = None, update_columns: Optional[List[str]] = None,
                     predicates: Optional[Union[List[str], str]] = None) -> str:
        """Write the batch in ``source`` (a temporary view) into ``target`` by ``strategy``; a summary."""
        from dbt.adapters.hoodpy.writes import write_batch

        spec = self._spec(model)
        window = None
        batch = model.get("batch") or {}
        if strategy == "microbatch" and batch.get("event_time_start") and batch.get("event_time_end"):
            window = (model["config"]["event_time"], str(batch["event_time_start"]), str(batch["event_time_end"]))
        if isinstance(predicates, str):
            predicates = [predicates]
        consumed = self._changes.take(model)
        try:
            reads = self._changes_read(consumed)
            summary = write_batch(self._spark(), str(target), str(source), strategy, spec,
                                  columns=columns, update_columns=update_columns,
                                  predicates=list(predicates or []),
                                  window=window, checkpoint=checkpoint_options(consumed),
                                  commit_empty=any(w.start != w.end for w in consumed))
        except BaseException as e:
            # The materialization drops the batch's temporary view after a write; a failed one would leave
            # it (and the views it holds) in the session for good.
            self._spark().sql(f"DROP VIEW IF EXISTS {source}")
            if isinstance(e, HoodieError):
                raise DbtRuntimeError(f"hoodpy write into {target} failed: {e}") from e
            raise
        from dbt.adapters.hoodpy.schema_sync import sync_catalog_types

        sync_catalog_types(self._spark(), str(target))  # a widened column type reaches dbt's column lists
        return summary.message + reads

    # -- reading upstream changes (dbt/adapters/hoodpy/changes.py) -----------------------------------------
    @available.parse(lambda *args, **kwargs: "")
    def hoodpy_changes(self, model: Dict[str, Any], this: BaseRelation, upstream: BaseRelation,
                       incremental: bool, fmt: str = "latest_state") -> str:
        """The relation ``hoodpy_changes(ref(...)[, format])`` renders for ``model``: the upstream's changes
        since the model's checkpoint on an incremental run, the upstream as of the chosen end otherwise (with
        ``format='cdc'``: change data capture rows, all of them up to the end); the window is remembered until
        the model's write stores its end in the same commit."""
        from dbt.adapters.hoodpy import changes as ch
        from hoodpy.config.read import CDC, LATEST_STATE
        from hoodpy.read.cdc import check_cdc_table
        from sql_ext import table_for_name

        name = f"{upstream.schema}.{upstream.identifier}".lower()
        fmt = str(fmt).lower()
        if fmt not in (LATEST_STATE, CDC):
            raise DbtRuntimeError(f"hoodpy_changes({name}) in model '{_node_name(model)}': format {fmt!r} is "
                                  f"not one of '{LATEST_STATE}', '{CDC}'")
        config = model.get("config") or {}
        if config.get("materialized") != "incremental":
            # A table or view model reads the upstream itself (or all its changes): nothing to checkpoint.
            return ch.changes_sql(name, None, None, fmt) if fmt == CDC else str(upstream)
        spec = self._spec(model)
        if not spec.is_hoodpy:
            raise DbtRuntimeError(f"hoodpy_changes({name}) in model '{_node_name(model)}': the model keeps the "
                                  "upstream instant it consumed in its own commits, so it must be a hoodpy table "
                                  "(give it a unique_key or file_format='hoodpy')")
        spark = self._spark()
        try:
            table = table_for_name(spark, name)
            if fmt == CDC:
                check_cdc_table(table)  # a clear error when rendering, before anything runs
            key = ch.checkpoint_key(ch.key_prefix(spec.options), name)
            end, start = ch.consumable_end(table), None
            if incremental:
                target = table_for_name(spark, f"{this.schema}.{this.identifier}")
                stored = target.timeline.latest_extra_metadata(key)
                if stored is not None:
                    start = stored[1]
                    ch.check_checkpoint(table, name, start, end)
                    end = max(end or start, start)  # nothing newer consumable yet: an empty window
        except HoodieError as e:
            raise DbtRuntimeError(f"hoodpy_changes({name}) in model '{_node_name(model)}': {e}") from e
        window = ch.Window(name, key, start, end, ch.changes_sql(name, end, start, fmt), fmt)
        self._changes.put(str(model.get("unique_id")), window)
        return window.sql

    @available
    def hoodpy_reads_changes(self, model: Dict[str, Any]) -> bool:
        """Whether the model's compiled SQL reads windows chosen by ``hoodpy_changes``."""
        return self._changes.reads(model)

    @available
    def hoodpy_create_table_as(self, relation: BaseRelation, sql: str, model: Dict[str, Any]) -> str:
        """Run a model's ``create table ... as`` with the checkpoints of the windows it reads stored in the
        table's first commit; a summary for dbt's run results."""
        from sql_ext.session import layer_of

        consumed = self._changes.take(model)
        spark = self._spark()
        try:
            reads = self._changes_read(consumed)
            with layer_of(spark).write_options(str(relation), checkpoint_options(consumed)):
                spark.sql(sql)
        except HoodieError as e:
            raise DbtRuntimeError(f"hoodpy create table {relation} failed: {e}") from e
        return "OK created" + reads

    def _changes_read(self, windows: List[Any]) -> str:
        """``; read N records of <window>, ...`` for a run's message (empty without windows)."""
        from dbt.adapters.hoodpy.changes import records_read

        parts = [f"{records_read(self._spark(), w)} records of {w.describe()}" for w in windows]
        return f"; read {', '.join(parts)}" if parts else ""

    @available
    def hoodpy_rebuild_without(self, relation: BaseRelation, columns: List[str], model: Dict[str, Any]) -> None:
        """on_schema_change=sync_all_columns: Hudi never drops columns, so the table is rebuilt without them
        (into a new table, which then takes the old one's name)."""
        from dbt.adapters.hoodpy.schema_sync import rebuild_without

        try:
            rebuild_without(self._spark(), str(relation), relation.identifier, columns, self._spec(model))
        except HoodieError as e:
            raise DbtRuntimeError(f"hoodpy could not drop column(s) {', '.join(columns)} of {relation}: {e}") from e
        self.cache_dropped(relation)
        self.cache_added(relation.incorporate(type="table", is_hoodpy=True))

    @available
    def hoodpy_check_column_types(self, relation: BaseRelation, batch: BaseRelation, model: Dict[str, Any],
                                  ) -> List[str]:
        """on_schema_change append_new_columns / sync_all_columns: the model's changed column types follow
        Hudi's type promotion; narrowing fails naming the model and the column, before anything is written.
        Returns the columns that became strings (the table was rebuilt)."""
        from dbt.adapters.hoodpy.schema_sync import check_type_changes

        try:
            rebuilt = check_type_changes(self._spark(), str(relation), str(batch), relation.identifier,
                                         self._spec(model))
        except HoodieError as e:
            raise DbtRuntimeError(f"hoodpy model '{_node_name(model)}': {e}") from e
        if rebuilt:
            self.cache_dropped(relation)
            self.cache_added(relation.incorporate(type="table", is_hoodpy=True))
        return rebuilt

    @available
    def hoodpy_service_args(self, model: Dict[str, Any], service: str, overrides: Dict[str, Any]) -> str:
        """``name => value`` arguments of a ``CALL run_clustering`` / ``run_compaction`` / ``run_clean`` for a
        model's table: the model's clustering / compaction / clean config, overridden by the macro's arguments."""
        from dbt.adapters.hoodpy.services import procedure_args

        try:
            return procedure_args(self._spec(model), service, overrides)
        except HoodieError as e:
            raise _config_error(model, e) from e
