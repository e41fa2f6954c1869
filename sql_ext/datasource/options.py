"""The options a DataFrame read or write gives ``format("hoodpy")``, as hoodpy's config reads them.

Spark hands options over as strings under case-insensitive keys (``startoffset`` is
``hoodie.datasource.streaming.startOffset``); hoodpy's config compares keys exactly, so declared keys are
respelled as declared. Every option is kept: ``hoodie.*`` keys configure the table and the write, and keys
under ``hoodie.datasource.write.commitmeta.key.prefix`` (default ``_``) go into the commit's extraMetadata,
as in Hudi's datasource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import hoodpy.config.registry  # noqa: F401 -- declares every scope's keys, so their spellings are known
from hoodpy.config import declared_spelling

PATH = "path"  # Spark's option for the path given to load() / save() / start()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def hoodpy_options(options: Mapping[str, Any]) -> dict[str, str]:
    """``options`` with declared keys spelled as declared and values as strings (None values dropped, as
    Spark's ``option(key, None)`` unsets nothing)."""
    return {declared_spelling(str(k)): _text(v) for k, v in options.items() if v is not None}


def table_path(path: str | None, options: Mapping[str, str], call: str) -> str:
    """The table's base path: ``path`` as given to the call, else the ``path`` option."""
    from hoodpy.errors import MissingConfigError

    chosen = path if path is not None else options.get(PATH)
    if not chosen:
        raise MissingConfigError(PATH, f"{call} of format('hoodpy') needs the table's base path")
    return str(chosen)
