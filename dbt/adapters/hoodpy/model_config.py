"""dbt model config -> hoodie options: the contract between a model's ``config(...)`` and the table.

=====================  ===============================================================================
model config           hoodpy / Hudi
=====================  ===============================================================================
unique_key (str|list)  record key (``primaryKey`` / ``hoodie.datasource.write.recordkey.field``); none with
                       ``file_format='hoodpy'``: a table with generated keys (Hudi 0.14+), appended to
precombine_key         ordering field (``preCombineField``): a stored row with a larger value survives
partition_by           partition fields (hive-style paths)
table_type             ``cow`` (copy-on-write, the default) or ``mor`` (merge-on-read): ``type`` in TBLPROPERTIES
index_type             ``hoodie.index.type`` (BUCKET: ``hoodie.bucket.index.num.buckets`` / ``.hash.field`` in
                       hoodie_options)
hoodie_options         any ``hoodie.*`` key, passed as is
clustering             ``{order: [cols], strategy: linear|z-order|hilbert, inline: true, max_commits: 4,
                       target_file_max_bytes: N, small_file_limit: N}`` -> ``hoodie.clustering.*``
compaction             merge-on-read tables: ``{inline: true, max_delta_commits: 5, max_delta_seconds: N,
                       trigger_strategy: NUM_COMMITS|TIME_ELAPSED|NUM_AND_TIME|NUM_OR_TIME, target_io: MB,
                       logfile_size_threshold: N}`` -> ``hoodie.compact.*`` / ``hoodie.compaction.*``
clean                  ``{policy: KEEP_LATEST_COMMITS|KEEP_LATEST_FILE_VERSIONS|KEEP_LATEST_BY_HOURS,
                       retained: N, automatic: true}`` -> ``hoodie.cleaner.*`` / ``hoodie.clean.*``
delete_column          a boolean column: rows with true delete their key; the column is not stored
=====================  ===============================================================================

Pure Python (no Spark, no dbt): validation raises :class:`~hoodpy.errors.InvalidConfigError` /
:class:`~hoodpy.errors.MissingConfigError` naming the model and the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hoodpy.config import ConfigKey, HoodieConfig, parse_csv
from hoodpy.config.clean import KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanConfig
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.config.compaction import CompactionConfig
from hoodpy.config.index import IndexConfig
from hoodpy.config.sql import TableOptions
from hoodpy.errors import InvalidConfigError, MissingConfigError
from hoodpy.index.bucket import BucketSpec
from sql_ext.catalog import HOODPY_PROVIDERS, hoodpy_table_properties

HOODPY_FORMATS = HOODPY_PROVIDERS  # a file_format the SQL layer creates as a hoodpy table
# Strategies per target format; "merge" is dbt's name for an upsert honouring merge_(update|exclude)_columns.
HOODPY_STRATEGIES = ("upsert", "merge", "append", "insert", "insert_overwrite", "delete+insert", "microbatch")
SPARK_STRATEGIES = ("append", "insert_overwrite")
KEYED_STRATEGIES = frozenset({"upsert", "merge", "delete+insert"})

_CLUSTERING_KEYS = {
    "order": ClusteringConfig.SORT_COLUMNS,
    "strategy": ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY,
    "inline": ClusteringConfig.INLINE,
    "max_commits": ClusteringConfig.INLINE_MAX_COMMITS,
    "target_file_max_bytes": ClusteringConfig.TARGET_FILE_MAX_BYTES,
    "small_file_limit": ClusteringConfig.SMALL_FILE_LIMIT,
}
_COMPACTION_KEYS = {
    "inline": CompactionConfig.INLINE,
    "max_delta_commits": CompactionConfig.INLINE_MAX_DELTA_COMMITS,
    "max_delta_seconds": CompactionConfig.INLINE_MAX_DELTA_SECONDS,
    "trigger_strategy": CompactionConfig.INLINE_TRIGGER_STRATEGY,
    "target_io": CompactionConfig.TARGET_IO,
    "logfile_size_threshold": CompactionConfig.LOG_FILE_SIZE_THRESHOLD,
}
_CLEAN_KEYS = ("policy", "retained", "automatic")
_RETAINED_KEY = {
    KEEP_LATEST_COMMITS: CleanConfig.COMMITS_RETAINED,
    KEEP_LATEST_FILE_VERSIONS: CleanConfig.FILE_VERSIONS_RETAINED,
    KEEP_LATEST_BY_HOURS: CleanConfig.HOURS_RETAINED,
}
_LAYOUT_NAMES = {"LINEAR": "linear", "ZORDER": "z-order", "HILBERT": "hilbert"}


def _names(value: Any) -> tuple[str, ...]:
    """Column names from a string (comma-separated) or a list, duplicates dropped."""
    return () if value is None else tuple(dict.fromkeys(parse_csv(value)))


def _parsed(model: str, name: str, option: ConfigKey, value: Any) -> Any:
    """The model's ``name`` setting parsed as the hoodie option it becomes (the engine's parser), so that
    dbt accepts what the write accepts; an error names the model and the dbt key."""
    try:
        return option.parse(value)
    except (TypeError, ValueError) as e:
        raise InvalidConfigError(name, value, f"model {model!r}: {e}") from None


def _count(model: str, name: str, option: ConfigKey, value: Any) -> int:
    """A size or count setting: the option's integer, never negative."""
    try:
        number = option.parse(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0:
        raise InvalidConfigError(name, value, f"model {model!r}: expected a non-negative integer")
    return number


@dataclass(frozen=True)
class ClusteringSpec:
    sort_columns: tuple[str, ...]
    layout: str          # linear, z-order, hilbert
    inline: bool


@dataclass(frozen=True)
class CompactionSpec:
    inline: bool


@dataclass(frozen=True)
class TableSpec:
    """What one model's config asks of its table."""

    model: str
    file_format: str
    record_key: tuple[str, ...] = ()
    precombine_field: str | None = None
    partition_by: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)   # hoodie.* keys for every write
    clustering: ClusteringSpec | None = None
    clean_automatic: bool = False
    compaction: CompactionSpec | None = None
    delete_column: str | None = None
    table_type: str = "cow"  # cow or mor

    @property
    def is_hoodpy(self) -> bool:
        return self.file_format in HOODPY_FORMATS

    def table_properties(self) -> dict[str, str]:
        """TBLPROPERTIES of ``CREATE TABLE ... USING hoodpy``."""
        return hoodpy_table_properties(self.record_key, self.precombine_field, self.options, self.table_type)

    def check_columns(self, columns: Sequence[str]) -> None:
        """Every column the config names must be a column of the model's query."""
        present = {c.lower() for c in columns}
        named = [("unique_key", c) for c in self.record_key]
        named += [("precombine_key", self.precombine_field)] if self.precombine_field else []
        named += [("partition_by", c) for c in self.partition_by]
        named += [("clustering.order", c) for c in (self.clustering.sort_columns if self.clustering else ())]
        named += [("delete_column", self.delete_column)] if self.delete_column else []
        for key, column in named:
            if column.lower() not in present:
                raise InvalidConfigError(key, column, f"model {self.model!r}: {column!r} is not a column of the "
                                         f"model (columns: {', '.join(columns)})")


def table_spec(model: str, config: Mapping[str, Any], *, resource_type: str = "model",
               record_key: Sequence[str] | None = None) -> TableSpec:
    """Validate a node's config into a :class:`TableSpec`.

    ``file_format`` defaults to ``hoodpy`` when a ``unique_key`` is set, else to Spark's ``parquet`` (as
    dbt-spark's default); ``file_format='hoodpy'`` without a ``unique_key`` is a table whose record keys are
    generated, as Hudi 0.14+ makes a table without a record key. ``record_key`` overrides ``unique_key``
    (snapshots key by ``dbt_scd_id``).
    """
    keys = tuple(record_key) if record_key is not None else _names(config.get("unique_key"))
    file_format = str(config.get("file_format") or ("hoodpy" if keys else "parquet")).lower()
    hoodpy_only = [k for k in ("precombine_key", "index_type", "hoodie_options", "clustering", "compaction", "clean",
                               "delete_column", "table_type") if config.get(k) not in (None, {}, [])]
    if file_format not in HOODPY_FORMATS:
        if hoodpy_only:
            raise InvalidConfigError(hoodpy_only[0], config.get(hoodpy_only[0]),
                                     f"model {model!r}: applies to hoodpy tables only, but file_format is "
                                     f"{file_format!r}")
        return TableSpec(model, file_format, partition_by=_names(config.get("partition_by")))
    options: dict[str, str] = {}
    index_type = config.get("index_type")
    if index_type:
        options[IndexConfig.TYPE.key] = _parsed(model, "index_type", IndexConfig.TYPE, index_type)
    for key, value in dict(config.get("hoodie_options") or {}).items():
        if not str(key).startswith("hoodie."):
            raise InvalidConfigError(f"hoodie_options.{key}", value,
                                     f"model {model!r}: only hoodie.* keys belong in hoodie_options")
        options[str(key)] = _option_text(value)
    _check_bucket_layout(model, keys, options)
    clustering = _clustering(model, config.get("clustering"), options)
    clean_automatic = _clean(model, config.get("clean"), options)
    compaction = _compaction(model, config.get("compaction"), options)
    precombine = config.get("precombine_key")
    delete_column = config.get("delete_column")
    table_type = _parsed(model, "table_type", TableOptions.TYPE, config.get("table_type") or "cow")
    return TableSpec(model, file_format, keys, str(precombine) if precombine else None,
                     _names(config.get("partition_by")), options, clustering, clean_automatic,
                     compaction, str(delete_column) if delete_column else None,
                     "mor" if table_type in ("mor", "merge_on_read") else "cow")


def _check_bucket_layout(model: str, keys: Sequence[str], options: Mapping[str, str]) -> None:
    """With ``index_type='BUCKET'``, the bucket options (``hoodie_options``) must describe a valid layout."""
    try:
        BucketSpec.for_new_table(options, keys)
    except InvalidConfigError as e:
        raise InvalidConfigError(e.key, e.value, f"model {model!r}: {e.reason}") from None


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _section(model: str, name: str, value: Any, allowed: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidConfigError(name, value, f"model {model!r}: expected a mapping of {', '.join(allowed)}")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise InvalidConfigError(f"{name}.{unknown[0]}", value[unknown[0]],
                                 f"model {model!r}: unknown {name} config key {unknown[0]!r} "
                                 f"(known: {', '.join(allowed)})")
    return dict(value)


def _clustering(model: str, value: Any, options: dict[str, str]) -> ClusteringSpec | None:
    if value is None:
        return None
    section = _section(model, "clustering", value, list(_CLUSTERING_KEYS))
    sort_columns = _names(section.get("order"))
    if not sort_columns:
        raise MissingConfigError("clustering.order", f"model {model!r}: clustering needs the columns to sort by")
    layout = _parsed(model, "clustering.strategy", _CLUSTERING_KEYS["strategy"], section.get("strategy", "linear"))
    inline = _parsed(model, "clustering.inline", _CLUSTERING_KEYS["inline"], section.get("inline", True))
    options[_CLUSTERING_KEYS["order"].key] = ",".join(sort_columns)
    options[_CLUSTERING_KEYS["strategy"].key] = _LAYOUT_NAMES[layout]
    options[_CLUSTERING_KEYS["inline"].key] = "true" if inline else "false"
    for key in ("max_commits", "target_file_max_bytes", "small_file_limit"):
        if key in section:
            option = _CLUSTERING_KEYS[key]
            options[option.key] = str(_count(model, f"clustering.{key}", option, section[key]))
    return ClusteringSpec(sort_columns, _LAYOUT_NAMES[layout], inline)


def _compaction(model: str, value: Any, options: dict[str, str]) -> CompactionSpec | None:
    if value is None:
        return None
    section = _section(model, "compaction", value, list(_COMPACTION_KEYS))
    inline = _parsed(model, "compaction.inline", _COMPACTION_KEYS["inline"], section.get("inline", True))
    options[_COMPACTION_KEYS["inline"].key] = "true" if inline else "false"
    if "trigger_strategy" in section:
        options[_COMPACTION_KEYS["trigger_strategy"].key] = _parsed(
            model, "compaction.trigger_strategy", _COMPACTION_KEYS["trigger_strategy"], section["trigger_strategy"])
    for key in ("max_delta_commits", "max_delta_seconds", "target_io", "logfile_size_threshold"):
        if key in section:
            option = _COMPACTION_KEYS[key]
            options[option.key] = str(_count(model, f"compaction.{key}", option, section[key]))
    try:
        CompactionConfig.validate(HoodieConfig.of(options))
    except InvalidConfigError as e:
        raise InvalidConfigError(e.key, e.value, f"model {model!r}: {e.reason}") from None
    return CompactionSpec(inline)


def _clean(model: str, value: Any, options: dict[str, str]) -> bool:
    if value is None:
        return False
    section = _section(model, "clean", value, _CLEAN_KEYS)
    policy = _parsed(model, "clean.policy", CleanConfig.POLICY, section.get("policy", KEEP_LATEST_COMMITS))
    automatic = _parsed(model, "clean.automatic", CleanConfig.AUTOMATIC, section.get("automatic", True))
    options[CleanConfig.POLICY.key] = policy
    options[CleanConfig.AUTOMATIC.key] = "true" if automatic else "false"
    if "retained" in section:
        retained = _RETAINED_KEY[policy]
        options[retained.key] = str(_count(model, "clean.retained", retained, section["retained"]))
    return automatic


def incremental_strategy(spec: TableSpec, strategy: str | None) -> str:
    """The model's strategy (default: upsert when keyed, else append), checked against its table format."""
    chosen = (strategy or ("upsert" if spec.record_key else "append")).lower()
    allowed = HOODPY_STRATEGIES if spec.is_hoodpy else SPARK_STRATEGIES
    if chosen in KEYED_STRATEGIES and not spec.record_key:
        generated = (" (without one, a hoodpy table's record keys are generated: its incremental runs append; "
                     "use incremental_strategy 'append' or 'insert_overwrite', or set unique_key)"
                     if spec.is_hoodpy else "")
        raise MissingConfigError("unique_key", f"model {spec.model!r}: incremental_strategy {chosen!r} needs a "
                                 f"unique_key, the record key it matches rows by{generated}")
    if chosen not in allowed:
        raise InvalidConfigError("incremental_strategy", chosen,
                                 f"model {spec.model!r}: file_format {spec.file_format!r} supports "
                                 f"{', '.join(allowed)}")
    if spec.delete_column and chosen not in ("upsert", "merge"):
        raise InvalidConfigError("delete_column", spec.delete_column,
                                 f"model {spec.model!r}: deletes by flag need incremental_strategy upsert or "
                                 f"merge, not {chosen!r}")
    return chosen
