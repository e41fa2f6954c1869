"""Arguments of the table-service CALLs the ``hoodpy_run_clustering()`` / ``hoodpy_run_compaction()`` /
``hoodpy_run_clean()`` macros emit.

The macros render ``CALL run_clustering(table => '<this>', ...)`` / ``CALL run_compaction(...)`` /
``CALL run_clean(...)`` (Hudi's procedures, run by hoodpy's SQL layer), so a post-hook's effect is visible in
dbt's logs as SQL. Defaults come from the model's ``clustering`` / ``compaction`` / ``clean`` config; the
macro's arguments override them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hoodpy.config.clean import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    RETAINED_BY_POLICY,
    CleanConfig,
)
from hoodpy.config.clustering import ClusteringConfig, parse_layout_strategy
from hoodpy.config.compaction import CompactionConfig
from hoodpy.errors import InvalidConfigError
from sql_ext.catalog import sql_literal

from dbt.adapters.hoodpy.model_config import TableSpec, _LAYOUT_NAMES, _names

_CLUSTERING_PLAN_KEYS = (ClusteringConfig.TARGET_FILE_MAX_BYTES.key, ClusteringConfig.SMALL_FILE_LIMIT.key)
_COMPACTION_PLAN_KEYS = (CompactionConfig.TARGET_IO.key, CompactionConfig.LOG_FILE_SIZE_THRESHOLD.key)
_COMPACTION_OPS = ("schedule", "execute", "scheduleandexecute", "run")
_RETAIN_ARGUMENT = {KEEP_LATEST_COMMITS: "retain_commits", KEEP_LATEST_FILE_VERSIONS: "file_versions_retained",
                    KEEP_LATEST_BY_HOURS: "hours_retained"}


def _options_text(options: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items())


def procedure_args(spec: TableSpec, service: str, overrides: Mapping[str, Any]) -> str:
    """``name => value, ...`` for ``run_clustering``, ``run_compaction`` or ``run_clean`` (without the table
    argument)."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    args: dict[str, Any] = {}
    if service == "clustering":
        unknown = [k for k in overrides if k not in ("order", "strategy", "options")]
        order = _names(overrides.get("order")) or (spec.clustering.sort_columns if spec.clustering else ())
        if order:
            args["order"] = ",".join(order)
        strategy = overrides.get("strategy") or (spec.clustering.layout if spec.clustering else None)
        if strategy:
            try:
                args["order_strategy"] = _LAYOUT_NAMES[parse_layout_strategy(strategy)]
            except ValueError as e:
                raise InvalidConfigError("strategy", strategy, f"model {spec.model!r}: {e}") from None
        options = {k: v for k, v in spec.options.items() if k in _CLUSTERING_PLAN_KEYS}
    elif service == "compaction":
        unknown = [k for k in overrides if k not in ("op", "options")]
        op = str(overrides.get("op", "run"))
        if op.lower() not in _COMPACTION_OPS:
            raise InvalidConfigError("op", op, f"model {spec.model!r}: expected schedule, execute, "
                                               "scheduleAndExecute or run")
        args["op"] = op
        options = {k: v for k, v in spec.options.items() if k in _COMPACTION_PLAN_KEYS}
    elif service == "clean":
        unknown = [k for k in overrides if k not in ("policy", "retained", "options")]
        policy = overrides.get("policy") or spec.options.get(CleanConfig.POLICY.key)
        if policy:
            try:
                policy = CleanConfig.POLICY.parse(policy)
            except ValueError as e:
                raise InvalidConfigError("policy", policy, f"model {spec.model!r}: {e}") from None
            args["clean_policy"] = policy
            retained = overrides.get("retained", spec.options.get(RETAINED_BY_POLICY[policy].key))
            if retained is not None:
                args[_RETAIN_ARGUMENT[policy]] = int(retained)
        options = {}
    else:
        raise InvalidConfigError("service", service, "expected clustering, compaction or clean")
    if unknown:
        raise InvalidConfigError(unknown[0], overrides[unknown[0]],
                                 f"model {spec.model!r}: not an argument of the {service} macro")
    options.update({str(k): v for k, v in dict(overrides.get("options") or {}).items()})
    if options:
        args["options"] = _options_text(options)
    return ", ".join(f"{k} => {sql_literal(v)}" for k, v in args.items())
