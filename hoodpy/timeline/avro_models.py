"""Hudi's Avro-encoded timeline instant files: their schemas (as Hudi 0.14.x defines them) and their codec.

Several instant files are not JSON but Avro object container files holding exactly one record, written by
Hudi's ``TimelineMetadataUtils.serializeAvroMetadata`` (a ``DataFileWriter``, codec null, writer schema
embedded):

===============================================  ===============================================
instant file                                     record
===============================================  ===============================================
``<t>.replacecommit.requested``                  HoodieRequestedReplaceMetadata (clustering plan)
``<t>.clean.requested`` / ``<t>.clean.inflight``  HoodieCleanerPlan
``<t>.clean``                                    HoodieCleanMetadata
``<t>.rollback.requested``                       HoodieRollbackPlan
``<t>.rollback``                                 HoodieRollbackMetadata
``<t>.savepoint``                                HoodieSavepointMetadata
``<t>.restore.requested``                        HoodieRestorePlan
``<t>.restore``                                  HoodieRestoreMetadata
``<t>.compaction.requested``                     HoodieCompactionPlan
===============================================  ===============================================

The schemas are data: ``avro/*.avsc`` beside this module, one per named record, transcribed from
``hudi-common/src/main/avro/*.avsc`` of Hudi 0.14.x (``avro/README.md`` gives each file's source). Records
are plain dicts, as fastavro reads and writes them.

Example:
    >>> from hoodpy.timeline import avro_models as am
    >>> plan = {"policy": "KEEP_LATEST_COMMITS", "version": 2,
    ...         "filePathsToBeDeletedPerPartition": {"2024": [{"filePath": "/t/2024/f.parquet"}]}}
    >>> data = am.serialize(am.AvroModel.CLEANER_PLAN, plan)
    >>> data[:4]
    b'Obj\\x01'
    >>> am.deserialize(am.AvroModel.CLEANER_PLAN, data)["lastCompletedCommitTimestamp"]
    ''
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Mapping
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Any

import fastavro
from fastavro.validation import ValidationError

from hoodpy.errors import InvalidInstantError

NAMESPACE = "org.apache.hudi.avro.model"

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = frozenset({"record", "error", "enum", "fixed"})


class AvroModel(str, Enum):
    """The Avro records Hudi writes into timeline instant files; the value is the record's full name."""

    REQUESTED_REPLACE_METADATA = f"{NAMESPACE}.HoodieRequestedReplaceMetadata"
    CLUSTERING_PLAN = f"{NAMESPACE}.HoodieClusteringPlan"
    CLEANER_PLAN = f"{NAMESPACE}.HoodieCleanerPlan"
    CLEAN_METADATA = f"{NAMESPACE}.HoodieCleanMetadata"
    ROLLBACK_PLAN = f"{NAMESPACE}.HoodieRollbackPlan"
    ROLLBACK_METADATA = f"{NAMESPACE}.HoodieRollbackMetadata"
    SAVEPOINT_METADATA = f"{NAMESPACE}.HoodieSavepointMetadata"
    RESTORE_PLAN = f"{NAMESPACE}.HoodieRestorePlan"
    RESTORE_METADATA = f"{NAMESPACE}.HoodieRestoreMetadata"
    COMPACTION_PLAN = f"{NAMESPACE}.HoodieCompactionPlan"
    COMMIT_METADATA = f"{NAMESPACE}.HoodieCommitMetadata"
    REPLACE_COMMIT_METADATA = f"{NAMESPACE}.HoodieReplaceCommitMetadata"
    ARCHIVED_META_ENTRY = f"{NAMESPACE}.HoodieArchivedMetaEntry"

    @property
    def short_name(self) -> str:
        """The record name without its namespace, e.g. ``HoodieCleanerPlan``."""
        return self.value.rsplit(".", 1)[1]


# --------------------------------------------------------------------------------------------------------
# Schema resolution
# --------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _avsc() -> dict[str, dict[str, Any]]:
    """Every packaged .avsc by full name, read on first use; named references are resolved against this.

    Read through importlib.resources rather than a file path, so that it also works where hoodpy is imported
    from a zip (``spark.submit.pyFiles``). Callers must not mutate the schemas.
    """
    folder = resources.files(__package__).joinpath("avro")
    if not folder.is_dir():  # a build or zip that left the package data out
        raise FileNotFoundError(f"hoodpy's Avro schemas are missing: no folder {folder}")
    out: dict[str, dict[str, Any]] = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".avsc"):
            avsc = json.loads(entry.read_text(encoding="utf-8"))
            out[_full_name(avsc["name"], avsc["namespace"])] = avsc
    return out


def _full_name(name: str, namespace: str) -> str:
    return name if "." in name else f"{namespace}.{name}"


def _expand(node: Any, namespace: str, names: dict[str, dict[str, Any]]) -> Any:
    """Inline named references: define each named type at its first use, refer to it by full name after.

    That is the self-contained form Java's ``Schema.toString()`` writes into a file header. It is also how
    ``fastavro.schema.load_schema`` resolves names (a unit test checks they agree), but that returns only
    fastavro's parsed form, whose key order differs: :func:`schema_json` writes the .avsc files' own.
    """
    if isinstance(node, str):
        if node in _PRIMITIVES:
            return node
        full = _full_name(node, namespace)
        if full in names:
            return full
        schemas = _avsc()
        if full not in schemas:
            raise KeyError(f"Unknown Avro type {full!r}")
        return _expand(schemas[full], namespace, names)
    if isinstance(node, list):
        return [_expand(branch, namespace, names) for branch in node]
    kind = node["type"]
    if kind in _NAMED:
        full = _full_name(node["name"], node.get("namespace", namespace))
        if full in names:
            raise ValueError(f"Avro type {full} is defined twice")
        out = {k: v for k, v in node.items() if k not in ("namespace", "fields")}
        out["name"] = full
        names[full] = out  # registered before the fields so that recursive references resolve
        own_namespace = full.rsplit(".", 1)[0]
        if "fields" in node:
            out["fields"] = [
                {**f, "type": _expand(f["type"], own_namespace, names)} for f in node["fields"]
            ]
        return out
    if kind == "array":
        return {**node, "items": _expand(node["items"], namespace, names)}
    if kind == "map":
        return {**node, "values": _expand(node["values"], namespace, names)}
    if isinstance(kind, (list, dict)) or kind not in _PRIMITIVES:
        return {**node, "type": _expand(kind, namespace, names)}
    return node  # a primitive with attributes, e.g. {"name": "filePath", "type": "string"}


@lru_cache(maxsize=None)
def _resolved(model: AvroModel) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(self-contained schema, named types by full name) of one model; callers must not mutate them."""
    names: dict[str, dict[str, Any]] = {}
    return _expand(model.value, NAMESPACE, names), names


@lru_cache(maxsize=None)
def _parsed(model: AvroModel) -> dict[str, Any]:
    return fastavro.parse_schema(copy.deepcopy(_resolved(model)[0]))


def schema(model: AvroModel | str) -> dict[str, Any]:
    """The model's schema with every named type resolved, parsed for fastavro (a fresh copy).

    Args:
        model: an ``AvroModel`` or its full Avro name.

    Returns:
        A fastavro-parsed schema; named types are defined inline at first use, so it is self-contained.

    Example:
        >>> schema(AvroModel.CLUSTERING_PLAN)["name"]
        'org.apache.hudi.avro.model.HoodieClusteringPlan'
    """
    return fastavro.parse_schema(copy.deepcopy(_resolved(AvroModel(model))[0]))


# --------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------


def _nullable(node: Any) -> bool:
    return node == "null" or (isinstance(node, list) and "null" in node)


def _complete(node: Any, datum: Any, names: Mapping[str, dict[str, Any]], path: str) -> Any:
    """Copy of ``datum`` with absent fields set to their schema default; unknown fields raise.

    Type mismatches are left for fastavro's validator to report.
    """
    if isinstance(node, str):
        if node in _PRIMITIVES:
            return datum
        node = names[node]
    if isinstance(node, list):
        if datum is None:
            return None
        for branch in node:
            resolved = names.get(branch, branch) if isinstance(branch, str) else branch
            if not isinstance(resolved, dict):
                continue
            kind = resolved["type"]
            if (kind in ("record", "map") and isinstance(datum, Mapping)) or (
                kind == "array" and isinstance(datum, (list, tuple))
            ):
                return _complete(resolved, datum, names, path)
        return datum
    kind = node["type"]
    if kind == "record":
        if not isinstance(datum, Mapping):
            return datum
        fields = {f["name"]: f for f in node["fields"]}
        unknown = sorted(set(datum) - set(fields))
        if unknown:
            raise ValueError(f"{path}: unknown field(s) {', '.join(map(str, unknown))} for {node['name']}")
        out: dict[str, Any] = {}
        for name, f in fields.items():
            if name in datum:
                out[name] = _complete(f["type"], datum[name], names, f"{path}.{name}")
            elif "default" in f:
                out[name] = copy.deepcopy(f["default"])
            elif _nullable(f["type"]):
                out[name] = None  # as Java's GenericRecord would write an unset nullable field
            else:
                raise ValueError(f"{path}.{name} is required by {node['name']} and has no default")
        return out
    if kind == "array" and isinstance(datum, (list, tuple)):
        return [_complete(node["items"], x, names, f"{path}[{i}]") for i, x in enumerate(datum)]
    if kind == "map" and isinstance(datum, Mapping):
        return {k: _complete(node["values"], v, names, f"{path}[{k!r}]") for k, v in datum.items()}
    return datum


def serialize(model: AvroModel | str, record: Mapping[str, Any]) -> bytes:
    """Encode one record as Hudi does: an Avro object container file, codec null, schema embedded.

    Absent fields get their schema default (for example ``version`` becomes 1, which for a cleaner plan or
    clean metadata means Hudi's *version 1* layout: pass ``version=2`` when writing what Hudi 0.14 writes).

    Args:
        model: which record ``record`` is.
        record: the record as a plain dict; nested records are dicts too.

    Returns:
        The bytes of the instant file.

    Raises:
        ValueError: a field the schema does not know, a required field missing, or a value of the wrong type.

    Example:
        >>> data = serialize(AvroModel.ROLLBACK_PLAN,
        ...                  {"instantToRollback": {"commitTime": "20240101000000000", "action": "commit"}})
        >>> deserialize(AvroModel.ROLLBACK_PLAN, data)["version"]
        1
    """
    model = AvroModel(model)
    full_schema, names = _resolved(model)
    complete = _complete(full_schema, record, names, model.short_name)
    buf = io.BytesIO()
    try:
        fastavro.writer(buf, _parsed(model), [complete], codec="null", validator=True)
    except ValidationError as e:
        raise ValueError(f"Record is not a valid {model.short_name}: {e}") from e
    return buf.getvalue()


def deserialize(model: AvroModel | str, data: bytes, source: str | None = None) -> dict[str, Any]:
    """Read the single record of an Avro instant file, projected onto the 0.14 schema of ``model``.

    The writer schema embedded in ``data`` is honoured: fields a newer Hudi added are dropped, fields an
    older Hudi lacked get their defaults (Avro schema resolution). Like Hudi, only the first record is read.

    Args:
        model: which record the file must hold.
        data: the file's bytes.
        source: where ``data`` came from (e.g. the instant file name), named in error messages.

    Returns:
        The record as a plain dict.

    Raises:
        InvalidInstantError: ``data`` is empty, not an Avro container file, holds no record, or holds a
            different record type.

    Example:
        >>> deserialize(AvroModel.CLEANER_PLAN, b"", source="001.clean.requested")
        Traceback (most recent call last):
        ...
        hoodpy.errors.InvalidInstantError: Cannot read HoodieCleanerPlan from 001.clean.requested: the file is empty
    """
    model = AvroModel(model)
    where = f" from {source}" if source else ""
    prefix = f"Cannot read {model.short_name}{where}"
    if not data:
        raise InvalidInstantError(f"{prefix}: the file is empty")
    try:
        reader = fastavro.reader(io.BytesIO(data), reader_schema=_parsed(model))
        writer_name = reader.writer_schema.get("name") if isinstance(reader.writer_schema, dict) else None
        if writer_name != model.value:
            raise InvalidInstantError(f"{prefix}: it holds a {writer_name or 'non-record'} record")
        for record in reader:
            return record
    except InvalidInstantError:
        raise
    except Exception as e:  # fastavro reports corrupt input with many exception types (ValueError, EOFError, ...)
        raise InvalidInstantError(f"{prefix}: not a readable Avro container file ({type(e).__name__}: {e})") from e
    raise InvalidInstantError(f"{prefix}: the Avro file holds no record")


# --------------------------------------------------------------------------------------------------------
# Bare records (no container file), as log-file data blocks hold them
# --------------------------------------------------------------------------------------------------------


def schema_json(model: AvroModel | str) -> str:
    """The self-contained schema as JSON text (what Java's ``Schema.toString()`` puts in a block header)."""
    return json.dumps(_resolved(AvroModel(model))[0], separators=(",", ":"))


def encode_record(model: AvroModel | str, record: Mapping[str, Any]) -> bytes:
    """Avro binary encoding of one record (no header), defaults filled in as :func:`serialize` does."""
    model = AvroModel(model)
    full_schema, names = _resolved(model)
    complete = _complete(full_schema, record, names, model.short_name)
    buf = io.BytesIO()
    try:
        fastavro.schemaless_writer(buf, _parsed(model), complete)
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"Record is not a valid {model.short_name}: {e}") from e
    return buf.getvalue()


def decode_record(model: AvroModel | str, data: bytes, writer_schema: str | None = None) -> dict[str, Any]:
    """Decode one bare record written with ``writer_schema`` (JSON text; default: the model's own),
    projected onto the model's schema."""
    model = AvroModel(model)
    writer = fastavro.parse_schema(json.loads(writer_schema)) if writer_schema else _parsed(model)
    return fastavro.schemaless_reader(io.BytesIO(data), writer, _parsed(model))


# --------------------------------------------------------------------------------------------------------
# Table versions 8 and 9 (Hudi 1.x writer schemas)
# --------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def table_version_8_schema(name: str) -> dict[str, Any]:
    """The writer schema Hudi 1.x embeds in ``name``'s instant files (``avro/table_version_8/<name>.avsc``,
    fully inlined as Java writes it), parsed for fastavro. Callers must not mutate it."""
    text = resources.files(__package__).joinpath("avro", "table_version_8", f"{name}.avsc").read_text("utf-8")
    return fastavro.parse_schema(json.loads(text))


def serialize_for_layout(model: AvroModel | str, record: Mapping[str, Any], layout: int,
                         added: Mapping[str, Any] | None = None) -> bytes:
    """:func:`serialize` for a table of timeline ``layout``: in layout 2 with the Hudi 1.x writer schema
    where hoodpy has it (fields 1.x added take their defaults, or their value in ``added``), else with the
    0.14 one (which Java 1.x reads by schema resolution)."""
    model = AvroModel(model)
    if layout < 2 or not resources.files(__package__).joinpath(
            "avro", "table_version_8", f"{model.short_name}.avsc").is_file():
        return serialize(model, record)
    full_schema, names = _resolved(model)
    complete = {**_complete(full_schema, record, names, model.short_name), **(added or {})}
    buf = io.BytesIO()
    try:
        fastavro.writer(buf, table_version_8_schema(model.short_name), [complete], codec="null", validator=True)
    except ValidationError as e:
        raise ValueError(f"Record is not a valid {model.short_name}: {e}") from e
    return buf.getvalue()
