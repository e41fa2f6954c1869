"""Typed view of Hudi's ``hoodie.*`` options.

Every key is declared once as a :class:`ConfigKey` in its scope module (table, write, index, storage), with
Hudi's spelling, default, parser and deprecated aliases. Code reads ``config.get(WriteConfig.OPERATION)``,
never the string.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodpy.errors import InvalidConfigError, MissingConfigError


def parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError("expected true or false")


def parse_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer")
    return int(str(value).strip())


def parse_float(value: object) -> float:
    return float(str(value).strip())


def parse_str(value: object) -> str:
    return str(value)


def parse_csv(value: object) -> tuple[str, ...]:
    """Comma-separated names; a list or tuple is accepted as is."""
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value]
    else:
        items = [v.strip() for v in str(value).split(",")]
    return tuple(v for v in items if v)


def parse_ordering_field(value: object) -> str:
    """The ordering (precombine) field, or Hudi 1.x's comma-separated list of them (compared as a tuple, the
    first field first), normalised to ``a,b`` (no blanks; empty: none); split it with :func:`ordering_fields`."""
    return ",".join(parse_csv(value))


def ordering_fields(value: str | None) -> tuple[str, ...]:
    """The fields of an ordering (precombine) setting, in comparison order; () for none."""
    return parse_csv(value) if value else ()


def parse_enum(*choices: str) -> Callable[[object], str]:
    """Case-insensitive choice; returns the canonical (upper-case) spelling."""
    canonical = {c.upper().replace("-", "_"): c for c in choices}

    def parse(value: object) -> str:
        text = str(value).strip().upper().replace("-", "_")
        if text not in canonical:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return canonical[text]

    parse.choices = choices  # type: ignore[attr-defined]
    return parse


@dataclass(frozen=True)
class ConfigKey:
    """One ``hoodie.*`` option: its key as Hudi spells it, default, parser and deprecated aliases."""

    key: str
    default: Any
    parse: Callable[[object], Any] = parse_str
    doc: str = ""
    aliases: tuple[str, ...] = ()
    required: bool = False

    def __post_init__(self) -> None:
        for name in self.names():
            _DECLARED.setdefault(name, self)

    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)


# Every key and alias declared by a ConfigKey, wherever it was declared: the keys hoodpy honours
# (hoodpy.config.registry checks options against them).
_DECLARED: dict[str, ConfigKey] = {}


def declared_key(name: str) -> ConfigKey | None:
    """The ConfigKey declaring ``name`` (its key or an alias), if any module imported so far declares it."""
    return _DECLARED.get(name)


def declared_spelling(name: str) -> str:
    """``name`` as a key or alias declared so far spells it, compared ignoring case (Spark's reader and writer
    options are case-insensitive: ``startoffset`` means ``hoodie.datasource.streaming.startOffset``);
    ``name`` itself when nothing declares it."""
    if name in _DECLARED:
        return name
    lowered = name.lower()
    return next((declared for declared in _DECLARED if declared.lower() == lowered), name)


@dataclass
class HoodieConfig:
    """Options as given (strings or Python values), read through :class:`ConfigKey` declarations."""

    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, *layers: Mapping[str, Any] | None) -> HoodieConfig:
        """Merge layers of options; later layers win (table properties, then per-write options), under
        whichever of a key's names each layer uses: a user's ``hoodie.datasource.write.precombine.field``
        replaces the table's ``hoodie.table.precombine.field`` rather than hiding behind it."""
        merged: dict[str, Any] = {}
        for layer in layers:
            if not layer:
                continue
            for k, v in layer.items():
                if v is None:
                    continue
                declared = _DECLARED.get(str(k))
                for other in (declared.names() if declared is not None else ()):
                    if other != k and other not in layer:
                        merged.pop(other, None)
                merged[str(k)] = v
        return cls(merged)

    def raw(self, key: ConfigKey) -> Any | None:
        for name in key.names():
            if name in self.options:
                return self.options[name]
        return None

    def is_set(self, key: ConfigKey) -> bool:
        return self.raw(key) is not None

    def get(self, key: ConfigKey) -> Any:
        value = self.raw(key)
        if value is None:
            if key.required:
                raise MissingConfigError(key.key)
            return key.default
        try:
            return key.parse(value)
        except (TypeError, ValueError) as e:
            given = next(n for n in key.names() if n in self.options)  # the spelling the user wrote
            raise InvalidConfigError(given, value, str(e)) from e

    def with_options(self, extra: Mapping[str, Any] | None) -> HoodieConfig:
        return HoodieConfig.of(self.options, extra)

    def __iter__(self) -> Iterator[str]:
        return iter(self.options)


def declared_keys(scope: type) -> list[ConfigKey]:
    """The ConfigKeys declared as class attributes of a scope class."""
    return [v for v in vars(scope).values() if isinstance(v, ConfigKey)]
