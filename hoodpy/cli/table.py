"""Opening the table a command names: its storage and properties, after checking that the path holds a
table hoodpy reads (no Spark involved)."""

from __future__ import annotations

from dataclasses import dataclass

from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import TableConfig, check_supported
from hoodpy.errors import TableNotFoundError
from hoodpy.storage import Storage


@dataclass(frozen=True)
class OpenTable:
    storage: Storage
    properties: dict[str, str]

    @property
    def name(self) -> str:
        return self.properties.get(TableConfig.NAME.key, "?")


def open_table(path: str) -> OpenTable:
    """The table at ``path``; TableNotFoundError / UnsupportedTableVersionError otherwise.

    Storage options (S3 endpoint, credentials) come from the environment, as for any plain path.
    """
    storage = Storage(path)
    props = load_table_properties(storage)
    if props is None:
        raise TableNotFoundError(storage.base_uri)
    check_supported(storage.base_uri, props)
    return OpenTable(storage, props)
