"""The procedure registry: name -> :class:`~sql_ext.procedures.base.Procedure` subclass.

Every module of this package is imported once and every ``Procedure`` subclass with a ``name`` is
registered, so a new procedure is one new file (no registration call). Names are case-insensitive, as in
Hudi's ``HoodieProcedures``.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from hoodpy.errors import UnknownProcedureError
from sql_ext.procedures.base import Procedure


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


@cache
def registry() -> dict[str, type[Procedure]]:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    table: dict[str, type[Procedure]] = {}
    for cls in _subclasses(Procedure):
        if not cls.name:
            continue
        key = cls.name.lower()
        if key in table and table[key] is not cls:
            raise RuntimeError(f"Procedure name {key!r} is declared by {table[key].__name__} and {cls.__name__}")
        table[key] = cls
    return dict(sorted(table.items()))


def procedure_names() -> list[str]:
    return list(registry())


def get_procedure(name: str) -> type[Procedure]:
    """The procedure class for ``name`` (case-insensitive); :class:`UnknownProcedureError` otherwise."""
    try:
        return registry()[name.lower()]
    except KeyError:
        raise UnknownProcedureError(name, registry()) from None


__all__ = ["Procedure", "get_procedure", "procedure_names", "registry"]
