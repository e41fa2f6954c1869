"""No silently ignored options: which ``hoodie.*`` keys hoodpy honours, which Hudi table properties it reads
and has nothing to do for, and a warning for every other ``hoodie.*`` key it is given.

Honoured keys are the :class:`~hoodpy.config.ConfigKey` declarations (keys and aliases) of the scope modules,
all imported here. A key hoodpy does not implement gets a :class:`~hoodpy.errors.HoodieConfigWarning` naming
it, once per key per process (Python's warnings reach a Spark shell, a notebook and dbt's console alike).
Values that would change results if ignored (an unsupported payload class, merge strategy or merge mode) are
refused by their keys' parsers when a write reads them, before anything is written.

Options reach hoodpy through :class:`hoodpy.table.HoodieTable` (its options and each write's), the table
services' options, SQL TBLPROPERTIES / OPTIONS / ``SET`` and dbt's ``hoodie_options``; all of them pass
:func:`check_options`. hoodie.properties passes :func:`check_table_properties` when a table is opened.
``docs/options.md`` is :func:`options_markdown`'s output.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from hoodpy.config import ConfigKey, declared_key, declared_keys
from hoodpy.config.clean import ArchivalConfig, CleanConfig
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.config.compaction import CompactionConfig
from hoodpy.config.concurrency import ConcurrencyConfig
from hoodpy.config.filesystem import FileSystemConfig
from hoodpy.config.index import IndexConfig
from hoodpy.config.keygen import KeyGeneratorConfig
from hoodpy.config.metadata import MetadataConfig
from hoodpy.config.read import ReadConfig
from hoodpy.config.sql import SqlConfig, TableOptions
from hoodpy.config.storage import StorageConfig
from hoodpy.config.table import TableConfig
from hoodpy.config.write import WriteConfig
from hoodpy.errors import HoodieConfigWarning

HUDI_PREFIX = "hoodie."

# Scope classes, in the order docs/options.md lists them.
SCOPES: tuple[type, ...] = (TableConfig, KeyGeneratorConfig, WriteConfig, ReadConfig, IndexConfig, StorageConfig,
                            ConcurrencyConfig, CleanConfig, ArchivalConfig, ClusteringConfig, CompactionConfig,
                            MetadataConfig,
                            SqlConfig, TableOptions, FileSystemConfig)

# Properties Java Hudi writes into hoodie.properties that hoodpy knows and has nothing to do for.
TABLE_PROPERTIES_WITHOUT_EFFECT: dict[str, str] = {
    "hoodie.table.initial.version": "The table version the table was created with (Hudi 1.x); informational, "
    "hoodie.table.version decides how the table is read and written.",
    "hoodie.table.format": "Hudi 1.1's table-format plugin; `native` (Hudi's own format) is the only one.",
    "hoodie.table.legacy.payload.class": "Hudi 1.1 keeps the payload class a table was created with for "
    "reference only; the merge mode replaced it and Hudi does not use it.",
    "hoodie.table.index.defs.path": "Where Hudi 1.x keeps secondary / expression index definitions; those "
    "indexes live in metadata partitions hoodpy does not maintain: a hoodpy write drops them (see "
    "hoodie.metadata.enable).",
    "hoodie.table.secondary.indexes.metadata": "Secondary index definitions (0.13+); those indexes live in "
    "metadata partitions hoodpy does not maintain: a hoodpy write drops them (see hoodie.metadata.enable).",
}

_warned: set[str] = set()


def is_honoured(name: str) -> bool:
    return declared_key(name) is not None


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, HoodieConfigWarning, stacklevel=3)


def check_options(options: Mapping[str, Any] | None) -> None:
    """Warn about each ``hoodie.*`` key of ``options`` hoodpy does not honour."""
    for key, value in (options or {}).items():
        key = str(key)
        if key.startswith(HUDI_PREFIX) and not is_honoured(key) and key not in TABLE_PROPERTIES_WITHOUT_EFFECT:
            _warn_once(key, f"hoodpy ignores the option {key}={value!r}: it does not implement it "
                       "(docs/options.md lists the keys hoodpy honours).")


def check_table_properties(properties: Mapping[str, str], table: str) -> None:
    """Warn about each ``hoodie.*`` property of a table's hoodie.properties that hoodpy does not know."""
    for key in properties:
        if key.startswith(HUDI_PREFIX) and not is_honoured(key) and key not in TABLE_PROPERTIES_WITHOUT_EFFECT:
            _warn_once(key, f"hoodpy ignores the table property {key}={properties[key]!r} of {table}: it does "
                       "not implement it (docs/options.md lists the keys hoodpy honours).")


# -- docs/options.md -----------------------------------------------------------------------------------
def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _default(key: ConfigKey) -> str:
    if key.required:
        return "required"
    if key.default is None or key.default in ((), ""):
        return ""
    if isinstance(key.default, bool):
        return "true" if key.default else "false"
    return f"`{_cell(key.default)}`"


def options_markdown() -> str:
    """The list of keys hoodpy honours and the table properties it knows without acting on (docs/options.md)."""
    lines = [
        "# Options",
        "",
        "<!-- Generated by hoodpy.config.registry.options_markdown(); "
        "regenerate with `python -m hoodpy.config.registry > docs/options.md`. -->",
        "",
        "hoodpy honours the `hoodie.*` keys below, given as options (`HoodieTable`, a write's or a table "
        "service's options), in SQL TBLPROPERTIES / OPTIONS / `SET`, in dbt's `hoodie_options`, or in a table's "
        "`hoodie.properties`. Any other `hoodie.*` key is ignored with a `HoodieConfigWarning` naming it "
        "(once per key per process). Values that would change results if ignored are refused with an "
        "`InvalidConfigError` before a write starts: payload classes other than DefaultHoodieRecordPayload, "
        "EventTimeAvroPayload and OverwriteWithLatestAvroPayload, the CUSTOM merge mode, record merger "
        "strategies and implementations of your own. Key generator keys (record key and partition fields, "
        "the key generator class or type, path style, `hoodie.keygen.timebased.*`) given with one write are "
        "honoured where the table does not record them (a Hudi 0.14 table keeps the time-based keys out of "
        "`hoodie.properties`) and refused naming the key where they differ from the table's, as Hudi refuses a "
        "write whose key generator conflicts with the table's.",
        "",
    ]
    for scope in SCOPES:
        lines += [f"## {scope.__name__}", "", "| Key | Also accepted as | Default | What hoodpy does |",
                  "|---|---|---|---|"]
        for key in declared_keys(scope):
            aliases = ", ".join(f"`{a}`" for a in key.aliases)
            lines.append(f"| `{key.key}` | {aliases} | {_default(key)} | {_cell(key.doc)} |")
        lines.append("")
    lines += ["## Table properties read without effect", "",
              "Java Hudi writes these into `hoodie.properties`; hoodpy knows them and has nothing to do for them, "
              "so opening such a table warns about none of them.", "", "| Key | Why nothing is to be done |",
              "|---|---|"]
    lines += [f"| `{key}` | {_cell(why)} |" for key, why in TABLE_PROPERTIES_WITHOUT_EFFECT.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(options_markdown(), end="")
