"""Record keys and partition paths, as Hudi's key generators make them: Simple, Complex, Nonpartitioned,
TimestampBased, Custom and GlobalDelete (and their Avro twins, which make the same keys).

The key generator is a pure description; :mod:`hoodpy.write.records` turns it into Spark expressions, and
:meth:`KeyGenerator.record_keys_of` and :meth:`~KeyGenerator.partition_paths_of` compute the same values
over Arrow rows (virtual keys, tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.config import ConfigKey, HoodieConfig
from hoodpy.config.keygen import KeyGeneratorConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError, InvalidRecordError, MissingConfigError
from hoodpy.keygen.timestamp import TimestampFormat, missing_format_error

_PACKAGE = "org.apache.hudi.keygen."
SIMPLE_KEY_GENERATOR = _PACKAGE + "SimpleKeyGenerator"
COMPLEX_KEY_GENERATOR = _PACKAGE + "ComplexKeyGenerator"
NONPARTITIONED_KEY_GENERATOR = _PACKAGE + "NonpartitionedKeyGenerator"
TIMESTAMP_KEY_GENERATOR = _PACKAGE + "TimestampBasedKeyGenerator"
CUSTOM_KEY_GENERATOR = _PACKAGE + "CustomKeyGenerator"
GLOBAL_DELETE_KEY_GENERATOR = _PACKAGE + "GlobalDeleteKeyGenerator"

# Kinds (Hudi's KeyGeneratorType names) and the classes Hudi writes for each: Spark's and the Avro twin.
SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, GLOBAL_DELETE = (
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")
KIND_CLASSES = {
    SIMPLE: (SIMPLE_KEY_GENERATOR, _PACKAGE + "SimpleAvroKeyGenerator"),
    COMPLEX: (COMPLEX_KEY_GENERATOR, _PACKAGE + "ComplexAvroKeyGenerator"),
    NON_PARTITION: (NONPARTITIONED_KEY_GENERATOR, _PACKAGE + "NonpartitionedAvroKeyGenerator"),
    TIMESTAMP: (TIMESTAMP_KEY_GENERATOR, _PACKAGE + "TimestampBasedAvroKeyGenerator"),
    CUSTOM: (CUSTOM_KEY_GENERATOR, _PACKAGE + "CustomAvroKeyGenerator"),
    GLOBAL_DELETE: (GLOBAL_DELETE_KEY_GENERATOR, _PACKAGE + "GlobalAvroDeleteKeyGenerator"),
}
_CLASS_KIND = {cls: kind for kind, classes in KIND_CLASSES.items() for cls in classes}
SUPPORTED_KEY_GENERATORS = tuple(_CLASS_KIND)
_TIMEBASED_KEYS = tuple(v for k, v in vars(KeyGeneratorConfig).items()
                        if isinstance(v, ConfigKey) and v.key.startswith("hoodie.keygen.timebased."))

# KeyGenUtils' placeholders inside composite keys, and the partition of null / empty values.
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"

# Characters Hudi's PartitionPathEncodeUtils.escapePathName writes as %XX (Hive's set), '%' first.
ESCAPED_CHARS = "%" + "".join(chr(c) for c in range(1, 0x20)) + "\"#'*/:=?\\\x7f{[]^"


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in ESCAPED_CHARS else c for c in text)


def unescape_path_name(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "%" and _is_hex(text[i + 1:i + 3]):
            out.append(chr(int(text[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def infer_key_generator_class(record_key_fields: tuple[str, ...], partition_fields: tuple[str, ...]) -> str:
    """The class Hudi 0.14 infers when none is configured."""
    if not partition_fields:
        return NONPARTITIONED_KEY_GENERATOR
    if len(record_key_fields) > 1 or len(partition_fields) > 1:
        return COMPLEX_KEY_GENERATOR
    return SIMPLE_KEY_GENERATOR


def key_generator_class(config: HoodieConfig, record_key_fields: tuple[str, ...],
                        partition_fields: tuple[str, ...]) -> str:
    """The configured class, else the class of the configured type (``hoodie.table.keygenerator.type``),
    else Hudi's inference."""
    klass = config.get(TableConfig.KEY_GENERATOR_CLASS)
    if klass:
        return klass.strip()
    kind = config.get(KeyGeneratorConfig.TYPE)
    if kind:
        name = kind.strip().upper()
        avro = name.endswith("_AVRO")
        classes = KIND_CLASSES.get(name[: -len("_AVRO")] if avro else name)
        if classes is None:
            raise InvalidConfigError(KeyGeneratorConfig.TYPE.key, kind,
                                     "hoodpy supports the types " + ", ".join(KIND_CLASSES))
        return classes[1 if avro else 0]
    return infer_key_generator_class(record_key_fields, partition_fields)


def table_defining_properties(partition_fields: tuple[str, ...], given: Mapping[str, Any] | None,
                              ) -> dict[str, str]:
    """The keys of ``given`` that shape a new table's keys and files, as hoodie.properties records them
    (strings); typed partition fields (``f:SIMPLE``) become ``hoodie.datasource.write.partitionpath.field``.
    The key generator type is resolved into the class instead."""
    config = HoodieConfig.of(given)
    out = {}
    for key in (*_TIMEBASED_KEYS, TableConfig.URL_ENCODE_PARTITIONING, TableConfig.POPULATE_META_FIELDS):
        if config.is_set(key):
            value = config.raw(key)
            out[key.key] = str(value).lower() if isinstance(value, bool) else str(value)
    typed = ",".join(partition_fields) if any(":" in f for f in partition_fields) else \
        config.raw(KeyGeneratorConfig.WRITE_PARTITION_FIELDS)
    if typed and ":" in str(typed):
        out[KeyGeneratorConfig.WRITE_PARTITION_FIELDS.key] = str(typed)
    return out


def split_partition_types(fields: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """('f1:SIMPLE', 'f2') -> (('f1', 'f2'), ('SIMPLE', None)): CustomKeyGenerator's field:TYPE form."""
    names, types = [], []
    for f in fields:
        name, sep, kind = f.partition(":")
        names.append(name.strip())
        types.append(kind.strip().upper() if sep else None)
    return tuple(names), tuple(types)


@dataclass(frozen=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    key_generator_class: str
    hive_style_partitioning: bool = False
    url_encode_partitioning: bool = False
    # Per partition field: SIMPLE (the value itself) or TIMESTAMP (the value printed as a date); None where
    # CustomKeyGenerator's config does not say (a Hudi 0.14 table opened without the writer's options).
    partition_types: tuple[str | None, ...] = ()
    timestamp: TimestampFormat | None = None

    @classmethod
    def from_config(cls, config: HoodieConfig) -> KeyGenerator:
        """The key generator the config describes; without record key fields, one that generates keys (as
        Hudi 0.14+ does for a table whose record key is not configured, see :attr:`auto_keys`)."""
        keys = tuple(config.get(TableConfig.RECORD_KEY_FIELDS))
        if not keys and not config.get(TableConfig.POPULATE_META_FIELDS):
            raise MissingConfigError(TableConfig.RECORD_KEY_FIELDS.key,
                                     "a table with virtual keys (hoodie.populate.meta.fields=false) needs record "
                                     "key fields: generated keys are only kept in _hoodie_record_key")
        partitions, types = split_partition_types(tuple(config.get(TableConfig.PARTITION_FIELDS)))
        klass = key_generator_class(config, keys, partitions)
        kind = _CLASS_KIND.get(klass)
        if kind is None:
            raise InvalidConfigError(
                TableConfig.KEY_GENERATOR_CLASS.key, klass,
                "hoodpy supports " + ", ".join(sorted({c.rsplit(".", 1)[-1] for c in SUPPORTED_KEY_GENERATORS})),
            )
        short = klass.rsplit(".", 1)[-1]
        if kind in (NON_PARTITION, GLOBAL_DELETE) and partitions:
            raise InvalidConfigError(TableConfig.PARTITION_FIELDS.key, ",".join(partitions),
                                     f"{short} takes no partition fields")
        if kind == CUSTOM:
            types = _custom_types(config, partitions, types)
        elif kind == TIMESTAMP:
            if len(partitions) != 1 or len(keys) > 1:
                raise InvalidConfigError(
                    TableConfig.PARTITION_FIELDS.key if len(partitions) != 1 else TableConfig.RECORD_KEY_FIELDS.key,
                    ",".join(partitions if len(partitions) != 1 else keys),
                    f"{short} takes one record key field and one partition field")
            types = (TIMESTAMP,)
        else:
            types = (SIMPLE,) * len(partitions)
        return cls(
            keys, partitions, klass,
            config.get(TableConfig.HIVE_STYLE_PARTITIONING),
            config.get(TableConfig.URL_ENCODE_PARTITIONING),
            types,
            TimestampFormat.from_config(config) if TIMESTAMP in types else None,
        )

    @property
    def kind(self) -> str:
        return _CLASS_KIND[self.key_generator_class]

    @property
    def auto_keys(self) -> bool:
        """No record key field is configured: inserts get keys ``<instant>_<task partition>_<row>`` (Hudi's
        AutoRecordGenWrapperKeyGenerator), and updates and deletes take the keys rows read from the table carry
        in ``_hoodie_record_key``."""
        return not self.record_key_fields

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def value_partition_fields(self) -> tuple[str, ...]:
        """Partition fields whose path segment holds the field's value (not a date made of it)."""
        return tuple(f for f, t in zip(self.partition_fields, self.partition_types, strict=True) if t == SIMPLE)

    @property
    def composite_record_key(self) -> bool:
        """Keys read 'f1:v1,f2:v2' for several fields, and always with ComplexKeyGenerator and
        GlobalDeleteKeyGenerator (Hudi 0.14)."""
        return len(self.record_key_fields) > 1 or self.kind in (COMPLEX, GLOBAL_DELETE)

    def record_key_of(self, values: dict[str, object]) -> str:
        """The record key of one record given as a dict (used for key predicates and tests)."""
        if not self.composite_record_key:
            return _plain(values[self.record_key_fields[0]])
        parts = []
        for f in self.record_key_fields:
            v = values.get(f)
            text = NULL_RECORDKEY_PLACEHOLDER if v is None else _plain(v)
            parts.append(f"{f}:{text or EMPTY_RECORDKEY_PLACEHOLDER}")
        return ",".join(parts)

    def partition_segment(self, field: str, value: str | None) -> str:
        """The path segment of a SIMPLE partition field's value (string form)."""
        text = DEFAULT_PARTITION_PATH if value is None or value == "" else value
        return self.styled_segment(field, text)

    def styled_segment(self, field: str, text: str) -> str:
        """A partition value escaped (url-encode) and named (hive style) as Hudi writes it in a path."""
        if self.url_encode_partitioning:
            text = escape_path_name(text)
        return f"{field}={text}" if self.hive_style_partitioning else text

    def partition_values(self, partition_path: str) -> dict[str, str | None]:
        """Field -> value string (None for the default partition) parsed back from a partition path, for
        the fields whose segment holds their value (:attr:`value_partition_fields`)."""
        if not self.partition_fields:
            return {}
        segments = partition_path.split("/")
        out: dict[str, str | None] = {}
        for field, kind, seg in zip(self.partition_fields, self.partition_types, segments, strict=False):
            if kind != SIMPLE:
                continue
            if self.hive_style_partitioning and "=" in seg:
                seg = seg.split("=", 1)[1]
            if self.url_encode_partitioning:
                seg = unescape_path_name(seg)
            out[field] = None if seg == DEFAULT_PARTITION_PATH else seg
        return out

    def timestamp_segments(self, field: str, column: pa.Array) -> pa.Array:
        """The path segments of a TIMESTAMP partition field's values (Arrow; runs in Spark tasks)."""
        values = self.timestamp_format().values(column)
        if self.url_encode_partitioning:
            values = pa.array([escape_path_name(v) for v in values.to_pylist()], pa.string())
        if self.hive_style_partitioning:
            values = pc.binary_join_element_wise(pa.scalar(f"{field}="), values, "")
        return values

    def check_writable(self) -> None:
        """InvalidConfigError unless the config says how to make every partition path (field types of
        CustomKeyGenerator, the time-based format)."""
        for name, kind in zip(self.partition_fields, self.partition_types, strict=True):
            if kind is None:
                raise _untyped_error(",".join(self.partition_fields), name, None)
        if TIMESTAMP in self.partition_types:
            self.timestamp_format()

    def timestamp_format(self) -> TimestampFormat:
        """How TIMESTAMP partition fields print; InvalidConfigError when the config does not say."""
        if self.timestamp is None:
            raise missing_format_error()
        return self.timestamp

    def partition_paths_of(self, rows: pa.Table) -> pa.Array:
        """Each row's partition path, computed over Arrow rows as :mod:`hoodpy.write.records` does in Spark."""
        n = rows.num_rows
        if not self.partition_fields:
            return pa.repeat(pa.scalar(""), n)
        self.check_writable()
        segments = []
        for field, kind in zip(self.partition_fields, self.partition_types, strict=True):
            column = rows.column(field).combine_chunks()
            if kind == TIMESTAMP:
                segments.append(self.timestamp_segments(field, column))
            else:
                segments.append(pa.array([self.partition_segment(field, None if v is None else _plain(v))
                                          for v in column.to_pylist()], pa.string()))
        return pc.binary_join_element_wise(*segments, "/")

    def record_keys_of(self, rows: pa.Table) -> pa.Array:
        """Each row's record key over Arrow rows; InvalidRecordError for a null or empty key."""
        if not self.composite_record_key and _casts_as_spark(rows.schema.field(self.record_key_fields[0]).type):
            keys = pc.cast(rows.column(self.record_key_fields[0]).combine_chunks(), pa.string())
            bad = keys.null_count or (len(keys) and pc.any(pc.equal(keys, "")).as_py())
        else:
            columns = {f: rows.column(f).to_pylist() for f in self.record_key_fields}
            keys = pa.array([self.record_key_of({f: columns[f][i] for f in columns}) if self.composite_record_key
                             else _plain_or_none(columns[self.record_key_fields[0]][i])
                             for i in range(rows.num_rows)], pa.string())
            bad = any(k is None or k == "" for k in keys.to_pylist())
        if bad:
            raise InvalidRecordError(
                f"A row has a null or empty record key (fields {', '.join(self.record_key_fields)})")
        return keys


# The options that decide how keys and partition paths are made, in the order a conflict is reported.
_KEY_SHAPING = (TableConfig.RECORD_KEY_FIELDS, TableConfig.PARTITION_FIELDS, TableConfig.KEY_GENERATOR_CLASS,
                KeyGeneratorConfig.TYPE, TableConfig.HIVE_STYLE_PARTITIONING, TableConfig.URL_ENCODE_PARTITIONING,
                KeyGeneratorConfig.WRITE_PARTITION_FIELDS, *_TIMEBASED_KEYS)


def _shape(keygen: KeyGenerator) -> tuple:
    """What decides the keys and paths a key generator makes (an Avro twin class makes the same)."""
    return (keygen.record_key_fields, keygen.partition_fields, keygen.kind, keygen.hive_style_partitioning,
            keygen.url_encode_partitioning, keygen.partition_types, keygen.timestamp)


def _completes(table: KeyGenerator, write: KeyGenerator) -> bool:
    """Whether ``write`` only fills in what ``table`` leaves open: CustomKeyGenerator field types or the
    time-based format a Hudi 0.14 table keeps out of hoodie.properties."""
    if _shape(table)[:5] != _shape(write)[:5]:
        return False
    types = all(t is None or t == w for t, w in zip(table.partition_types, write.partition_types, strict=True))
    return types and (table.timestamp is None or table.timestamp == write.timestamp)


def _given_name(given: HoodieConfig, key: ConfigKey) -> str:
    return next(n for n in key.names() if n in given.options)


def _recorded(table: KeyGenerator, table_config: HoodieConfig, key: ConfigKey) -> str:
    """What the table has for ``key``: its value, or (a key it does not record, such as the type beside a
    class) its key generator."""
    value = table_config.raw(key)
    if value is not None:
        return f"the table has {value!r}"
    return f"the table has no {key.key}: its key generator is {table.key_generator_class}"


def key_generator_for_write(table: KeyGenerator, table_config: HoodieConfig, options: Mapping[str, Any] | None,
                            ) -> KeyGenerator:
    """The key generator of one write given ``options`` (the write's own, under any of a key's names) on a
    table whose key generator and config are ``table`` / ``table_config``.

    The table's, unless the options only complete it (CustomKeyGenerator field types or the time-based format a
    Hudi 0.14 table keeps out of hoodie.properties): then the completed one. Options that would make other
    keys or partition paths (another key generator, record key or partition field, path style, time format)
    are refused naming the first of them: rows written so would not be found again under their keys, and Hudi
    refuses such a write too ("Config conflict", HoodieWriterUtils.validateTableConfig).
    """
    given = HoodieConfig.of(options)
    shaping = [key for key in _KEY_SHAPING if given.is_set(key)]
    if not shaping:
        return table
    merged = dict(table_config.options)
    if given.is_set(KeyGeneratorConfig.TYPE) and not given.is_set(TableConfig.KEY_GENERATOR_CLASS):
        shaping.append(TableConfig.KEY_GENERATOR_CLASS)  # the class would win over the type given
    for key in shaping:  # the write's value, under the name it was given, whichever name the table used
        for name in key.names():
            merged.pop(name, None)
        if given.is_set(key):
            merged[_given_name(given, key)] = given.raw(key)
    try:
        write = KeyGenerator.from_config(HoodieConfig(merged))
    except InvalidConfigError as e:
        if e.key in given.options:
            raise
        # The options clash with what the table records (e.g. a non-partitioned type on a partitioned table).
        first = next(k for k in shaping if given.is_set(k))
        raise InvalidConfigError(_given_name(given, first), given.raw(first),
                                 f"{_recorded(table, table_config, first)}, and with this option {e}") from e
    if _shape(write) == _shape(table):
        return table
    if _completes(table, write):
        return write
    for key in shaping:
        if given.is_set(key) and given.get(key) != table_config.get(key):
            raise InvalidConfigError(_given_name(given, key), given.raw(key),
                                     f"{_recorded(table, table_config, key)}; a write cannot change how the "
                                     "table's record keys and partition paths are made")
    raise InvalidConfigError(TableConfig.KEY_GENERATOR_CLASS.key, write.key_generator_class,
                             "the write's options make other record keys or partition paths than the table's")


def virtual_keys(config: HoodieConfig) -> KeyGenerator | None:
    """The key generator when the table keeps no keys in its files (``hoodie.populate.meta.fields=false``:
    Hudi's virtual keys), else None."""
    return None if config.get(TableConfig.POPULATE_META_FIELDS) else KeyGenerator.from_config(config)


def _casts_as_spark(t: pa.DataType) -> bool:
    """Types whose Arrow string cast prints what Spark's cast to string does."""
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_boolean(t)


def _custom_types(config: HoodieConfig, names: tuple[str, ...], types: tuple[str | None, ...],
                  ) -> tuple[str | None, ...]:
    """CustomKeyGenerator's per-field types: from hoodie.table.partition.fields (Hudi 1.x writes them there),
    else from the writer's ``hoodie.datasource.write.partitionpath.field`` (Hudi 0.14 keeps only names).
    None for a field no config types: the table reads, writes fail (:meth:`KeyGenerator.check_writable`)."""
    if names and None in types:
        written = config.raw(KeyGeneratorConfig.WRITE_PARTITION_FIELDS)
        if written:
            w_names, w_types = split_partition_types(tuple(p for p in str(written).split(",") if p.strip()))
            if w_names == names:
                types = w_types
    for name, kind in zip(names, types, strict=True):
        if kind is not None and kind not in (SIMPLE, TIMESTAMP):
            raise _untyped_error(config.raw(KeyGeneratorConfig.WRITE_PARTITION_FIELDS) or ",".join(names), name, kind)
    return types


def _untyped_error(value: object, name: str, kind: str | None) -> InvalidConfigError:
    return InvalidConfigError(
        KeyGeneratorConfig.WRITE_PARTITION_FIELDS.key, value,
        f"CustomKeyGenerator needs each partition field as field:SIMPLE or field:TIMESTAMP "
        f"({name!r} has {kind or 'no type'})")


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _plain_or_none(value: object) -> str | None:
    return None if value is None else _plain(value)
