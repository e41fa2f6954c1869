"""Tests of hoodpy.schema: Arrow <-> Avro as Java Hudi stores it, and the evolution rules."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.errors import HoodieError, SchemaEvolutionError
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema import (
    IS_DELETED_COLUMN,
    InvalidSchemaError,
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    avro_schema_to_json,
    decimal_fixed_size,
    evolve_schema,
    normalize_arrow_schema,
    parse_avro_schema,
    sanitize_avro_name,
    to_create_schema_form,
    with_meta_columns,
)

SAMPLES_DIR = Path("/work/shared/hudi-samples")


def nullable(t: Any) -> list[Any]:
    return ["null", t]


def only_field_avro(t: pa.DataType, name: str = "c", table: str = "t") -> Any:
    """The Avro type (inside ["null", T]) of a single-column table."""
    avro = avro_schema_from_arrow(pa.schema([(name, t)]), table)
    fastavro.parse_schema(avro)
    (field,) = avro["fields"]
    assert field["default"] is None and field["type"][0] == "null"
    return field["type"][1]


def shape(t: pa.DataType) -> Any:
    """A type's structure minus list/map child names and nullability (Java's Parquet differs there)."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ("list", shape(t.value_type))
    if pa.types.is_map(t):
        return ("map", shape(t.key_type), shape(t.item_type))
    if pa.types.is_struct(t):
        return ("struct", tuple((t.field(i).name, shape(t.field(i).type)) for i in range(t.num_fields)))
    return t


# ------------------------------------------------------------------------------------------------------
# Arrow -> Avro, per type
# ------------------------------------------------------------------------------------------------------

PRIMITIVE_CASES = [
    (pa.bool_(), "boolean", pa.bool_()),
    (pa.int8(), "int", pa.int32()),
    (pa.int16(), "int", pa.int32()),
    (pa.int32(), "int", pa.int32()),
    (pa.uint8(), "int", pa.int32()),
    (pa.uint16(), "int", pa.int32()),
    (pa.int64(), "long", pa.int64()),
    (pa.uint32(), "long", pa.int64()),
    (pa.float32(), "float", pa.float32()),
    (pa.float64(), "double", pa.float64()),
    (pa.string(), "string", pa.string()),
    (pa.large_string(), "string", pa.string()),
    (pa.binary(), "bytes", pa.binary()),
    (pa.large_binary(), "bytes", pa.binary()),
    (pa.dictionary(pa.int32(), pa.string()), "string", pa.string()),
    (pa.date32(), {"type": "int", "logicalType": "date"}, pa.date32()),
    (
        pa.timestamp("us", tz="UTC"),
        {"type": "long", "logicalType": "timestamp-micros"},
        pa.timestamp("us", "UTC"),
    ),
    (
        pa.timestamp("ms", tz="UTC"),
        {"type": "long", "logicalType": "timestamp-micros"},
        pa.timestamp("us", "UTC"),
    ),
    (
        pa.timestamp("ns", tz="America/Chicago"),
        {"type": "long", "logicalType": "timestamp-micros"},
        pa.timestamp("us", "UTC"),
    ),
    (
        pa.timestamp("s", tz="+02:00"),
        {"type": "long", "logicalType": "timestamp-micros"},
        pa.timestamp("us", "UTC"),
    ),
    (pa.timestamp("us"), {"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
    (pa.timestamp("ns"), {"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
]


@pytest.mark.parametrize(("arrow_type", "avro_type", "read_back"), PRIMITIVE_CASES, ids=str)
def test_primitive_types_round_trip(arrow_type: pa.DataType, avro_type: Any, read_back: pa.DataType) -> None:
    assert only_field_avro(arrow_type) == avro_type
    schema = pa.schema([("c", arrow_type)])
    back = arrow_schema_from_avro(avro_schema_from_arrow(schema, "t"))
    assert back == pa.schema([("c", read_back)])
    assert back == normalize_arrow_schema(schema)


@pytest.mark.parametrize(
    ("precision", "size"),
    [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (9, 4), (10, 5), (11, 5), (12, 6), (18, 8), (19, 9), (38, 16)],
)
def test_decimal_fixed_size_matches_spark(precision: int, size: int) -> None:
    assert decimal_fixed_size(precision) == size
    # Definition: the smallest two's-complement width holding 10^p - 1.
    assert 10**precision - 1 < 2 ** (8 * size - 1)
    assert size == 1 or 10**precision - 1 >= 2 ** (8 * (size - 1) - 1)


def test_decimal_is_fixed_named_after_its_field() -> None:
    assert only_field_avro(pa.decimal128(10, 5), name="price", table="trips") == {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.trips.trips_record.price",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 5,
    }
    schema = pa.schema([("price", pa.decimal128(38, 0)), ("small", pa.decimal128(1, 1))])
    assert arrow_schema_from_avro(avro_schema_from_arrow(schema, "trips")) == schema


def test_nested_types_are_named_like_spark() -> None:
    item = pa.struct([("f1", pa.string()), ("amount", pa.decimal128(5, 2))])
    inner = pa.struct([("x", pa.float64())])
    schema = pa.schema(
        [
            ("arr", pa.list_(item)),
            ("m", pa.map_(pa.string(), pa.struct([("v", pa.bool_())]))),
            ("s", pa.struct([("a", pa.int32()), ("child", inner), ("d", pa.decimal128(4, 1))])),
            ("ints", pa.large_list(pa.int64())),
            ("nested", pa.list_(pa.list_(pa.struct([("y", pa.int32())])))),
        ]
    )
    avro = avro_schema_from_arrow(schema, "t")
    fastavro.parse_schema(avro)
    ns = "hoodie.t.t_record"
    fields = {f["name"]: f["type"][1] for f in avro["fields"]}
    assert fields["arr"] == {
        "type": "array",
        "items": nullable(
            {
                "type": "record",
                "name": "arr",
                "namespace": ns,
                "fields": [
                    {"name": "f1", "type": nullable("string"), "default": None},
                    {
                        "name": "amount",
                        "type": nullable(
                            {
                                "type": "fixed",
                                "name": "fixed",
                                "namespace": f"{ns}.arr.amount",
                                "size": 3,
                                "logicalType": "decimal",
                                "precision": 5,
                                "scale": 2,
                            }
                        ),
                        "default": None,
                    },
                ],
            }
        ),
    }
    assert fields["m"]["type"] == "map"
    assert fields["m"]["values"][1]["name"] == "m"
    assert fields["m"]["values"][1]["namespace"] == ns
    s = fields["s"]
    assert (s["name"], s["namespace"]) == ("s", ns)
    child = s["fields"][1]["type"][1]
    assert (child["name"], child["namespace"]) == ("child", f"{ns}.s")
    assert s["fields"][2]["type"][1]["namespace"] == f"{ns}.s.d"
    assert fields["ints"] == {"type": "array", "items": nullable("long")}
    inner_list = fields["nested"]["items"][1]
    assert inner_list["type"] == "array"
    assert (inner_list["items"][1]["name"], inner_list["items"][1]["namespace"]) == ("nested", ns)

    back = arrow_schema_from_avro(avro)
    assert back == normalize_arrow_schema(schema)
    assert shape(back.field("arr").type) == shape(schema.field("arr").type)
    assert back.field("ints").type == pa.list_(pa.int64())


def test_meta_columns_and_delete_marker_are_not_stored() -> None:
    schema = pa.schema(
        [(c, pa.string()) for c in META_COLUMNS] + [("id", pa.int32()), (IS_DELETED_COLUMN, pa.bool_())]
    )
    avro = avro_schema_from_arrow(schema, "t")
    assert [f["name"] for f in avro["fields"]] == ["id"]


def test_include_meta_columns_matches_java_file_footer_shape() -> None:
    avro = avro_schema_from_arrow(pa.schema([("id", pa.int32())]), "t", include_meta_columns=True)
    assert [f["name"] for f in avro["fields"]] == [*META_COLUMNS, "id"]
    assert avro["fields"][0] == {
        "name": "_hoodie_commit_time",
        "type": ["null", "string"],
        "doc": "",
        "default": None,
    }
    fastavro.parse_schema(avro)


def test_table_name_is_sanitized_like_hudi() -> None:
    assert sanitize_avro_name("my-table.v2") == "my__table__v2"
    assert sanitize_avro_name("1abc") == "__abc"
    avro = avro_schema_from_arrow(pa.schema([("id", pa.int32())]), "my-table")
    assert (avro["name"], avro["namespace"]) == ("my__table_record", "hoodie.my__table")
    fastavro.parse_schema(avro)


@pytest.mark.parametrize(
    "arrow_type",
    [pa.uint64(), pa.float16(), pa.time64("us"), pa.null(), pa.binary(4), pa.duration("s"), pa.date64()],
    ids=str,
)
def test_unsupported_types_name_column_and_type(arrow_type: pa.DataType) -> None:
    with pytest.raises(SchemaEvolutionError) as err:
        avro_schema_from_arrow(pa.schema([("ok", pa.int32()), ("bad_col", arrow_type)]), "t")
    assert len(err.value.problems) == 1
    assert "bad_col" in err.value.problems[0] and str(arrow_type) in err.value.problems[0]


def test_map_with_int_keys_is_rejected() -> None:
    with pytest.raises(SchemaEvolutionError, match=r"'m'.*int32 keys.*string keys"):
        avro_schema_from_arrow(pa.schema([("m", pa.map_(pa.int32(), pa.string()))]), "t")


def test_nested_unsupported_type_names_path() -> None:
    schema = pa.schema([("s", pa.struct([("ok", pa.int32()), ("t", pa.time32("s"))]))])
    with pytest.raises(SchemaEvolutionError, match=r"'s\.t'.*time32"):
        avro_schema_from_arrow(schema, "t")


def test_invalid_and_duplicate_names_are_rejected() -> None:
    with pytest.raises(SchemaEvolutionError) as err:
        avro_schema_from_arrow(
            pa.schema([("my col", pa.int32()), ("a", pa.int32()), ("a", pa.string())]), "t"
        )
    text = str(err.value)
    assert "'my col' is not a valid Avro name" in text
    assert "'a' appears more than once" in text


def test_json_is_compact_and_ordered() -> None:
    avro = avro_schema_from_arrow(pa.schema([("id", pa.int32()), ("name", pa.string())]), "t")
    text = avro_schema_to_json(avro)
    assert text == (
        '{"type":"record","name":"t_record","namespace":"hoodie.t","fields":['
        '{"name":"id","type":["null","int"],"default":null},'
        '{"name":"name","type":["null","string"],"default":null}]}'
    )
    assert parse_avro_schema(text) == avro


def test_parse_rejects_bad_text() -> None:
    with pytest.raises(InvalidSchemaError, match="not JSON"):
        parse_avro_schema("{nope")
    with pytest.raises(InvalidSchemaError, match="Java-properties"):
        parse_avro_schema('{"type"\\:"record"}')
    with pytest.raises(InvalidSchemaError, match="not an Avro record"):
        parse_avro_schema('"string"')
    assert issubclass(InvalidSchemaError, HoodieError)


# ------------------------------------------------------------------------------------------------------
# Avro -> Arrow
# ------------------------------------------------------------------------------------------------------


def test_reads_both_union_orders_and_other_avro_forms() -> None:
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "a", "type": ["int", "null"]},
            {"name": "b", "type": "long"},
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED"]}},
            {"name": "e2", "type": ["null", "Color"]},
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 7, "scale": 2}},
            {"name": "tm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "odd", "type": {"type": "int", "logicalType": "something-new"}},
            {"name": "fx", "type": {"type": "fixed", "name": "md5", "size": 16}},
            {"name": "fx2", "type": "ns.md5"},
            {"name": "il", "type": ["null", "int", "long"]},
            {"name": "fd", "type": ["float", "double"]},
            {"name": "mixed", "type": ["null", "int", "string"]},
        ],
    }
    assert arrow_schema_from_avro(json.dumps(avro)) == pa.schema(
        [
            ("a", pa.int32()),
            ("b", pa.int64()),
            ("e", pa.string()),
            ("e2", pa.string()),
            ("d", pa.decimal128(7, 2)),
            ("tm", pa.timestamp("us", "UTC")),
            ("ltm", pa.timestamp("us")),
            ("u", pa.string()),
            ("odd", pa.int32()),
            ("fx", pa.binary()),
            ("fx2", pa.binary()),
            ("il", pa.int64()),
            ("fd", pa.float64()),
            ("mixed", pa.struct([("member0", pa.int32()), ("member1", pa.string())])),
        ]
    )
    assert all(f.nullable for f in arrow_schema_from_avro(avro))


def test_unknown_type_reference_is_an_error() -> None:
    avro = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "Missing"}]}
    with pytest.raises(InvalidSchemaError, match="Missing"):
        arrow_schema_from_avro(avro)
    with pytest.raises(InvalidSchemaError):
        arrow_schema_from_avro({"type": "array", "items": "int"})


def test_with_meta_columns_puts_meta_first_once() -> None:
    schema = pa.schema([("id", pa.int32()), ("_hoodie_record_key", pa.large_string()), ("v", pa.float64())])
    out = with_meta_columns(schema)
    assert out.names == [*META_COLUMNS, "id", "v"]
    assert all(out.field(c).type == pa.string() and out.field(c).nullable for c in META_COLUMNS)


# ------------------------------------------------------------------------------------------------------
# Property tests: anything we produce reads back to the normal form and is valid Avro
# ------------------------------------------------------------------------------------------------------

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6).filter(
    lambda n: not n.startswith("_hoodie")
)
LEAVES = st.sampled_from([t for t, _, _ in PRIMITIVE_CASES]) | st.builds(
    lambda p, s: pa.decimal128(p, min(s, p)), st.integers(1, 38), st.integers(0, 38)
)


def _struct(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    return st.lists(st.tuples(NAMES, children), min_size=1, max_size=4, unique_by=lambda x: x[0]).map(
        pa.struct
    )


TYPES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        children.map(pa.list_),
        children.map(pa.large_list),
        children.map(lambda t: pa.map_(pa.string(), t)),
        _struct(children),
    ),
    max_leaves=8,
)
SCHEMAS = st.lists(st.tuples(NAMES, TYPES), min_size=1, max_size=6, unique_by=lambda x: x[0]).map(pa.schema)


@settings(max_examples=150, deadline=None)
@given(SCHEMAS)
def test_any_supported_schema_round_trips(schema: pa.Schema) -> None:
    avro = avro_schema_from_arrow(schema, "prop")
    fastavro.parse_schema(avro)
    fastavro.parse_schema(to_create_schema_form(avro))
    normal = normalize_arrow_schema(schema)
    assert arrow_schema_from_avro(avro_schema_to_json(avro)) == normal
    assert arrow_schema_from_avro(to_create_schema_form(avro)) == normal
    assert avro_schema_from_arrow(normal, "prop") == avro
    assert [shape(f.type) for f in normal] == [
        shape(normalize_arrow_schema(pa.schema([f])).field(0).type) for f in schema
    ]
    # Evolution is the identity on a schema against itself, and a new table takes the normal form.
    assert evolve_schema(None, schema, key_fields=[]) == normal
    assert evolve_schema(normal, schema, key_fields=[]) == normal


# ------------------------------------------------------------------------------------------------------
# Evolution
# ------------------------------------------------------------------------------------------------------

TABLE = pa.schema(
    [
        ("id", pa.int32()),
        ("name", pa.string()),
        ("amount", pa.int32()),
        ("total", pa.int64()),
        ("price", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us", "UTC")),
        ("part", pa.string()),
        ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])),
    ]
)


def evolve(batch: pa.Schema, **kw: Any) -> pa.Schema:
    kw.setdefault("key_fields", ["id"])
    kw.setdefault("partition_fields", ["part"])
    return evolve_schema(TABLE, batch, **kw)


def replace(schema: pa.Schema, name: str, t: pa.DataType) -> pa.Schema:
    return schema.set(schema.get_field_index(name), pa.field(name, t))


def test_new_table_takes_batch_without_meta_columns() -> None:
    batch = with_meta_columns(
        pa.schema([("id", pa.int8()), (IS_DELETED_COLUMN, pa.bool_()), ("x", pa.string())])
    )
    out = evolve_schema(None, batch, key_fields=["id"])
    assert out == pa.schema([("id", pa.int32()), ("x", pa.string())])


def test_same_schema_is_unchanged_and_order_follows_table() -> None:
    batch = pa.schema(list(reversed(list(TABLE))))
    assert evolve(batch) == TABLE
    assert evolve(with_meta_columns(TABLE)) == TABLE


def test_new_columns_are_appended() -> None:
    batch = pa.schema([*TABLE, ("extra", pa.float64()), ("later", pa.date32())])
    out = evolve(pa.schema([batch.field("extra"), *TABLE, batch.field("later")]))
    assert out.names == [*TABLE.names, "extra", "later"]
    assert out.field("extra").nullable


def test_batch_widens_table_int_to_long() -> None:
    out = evolve(replace(TABLE, "amount", pa.int64()))
    assert out.field("amount").type == pa.int64()
    out = evolve(replace(TABLE, "amount", pa.float64()))
    assert out.field("amount").type == pa.float64()


def test_narrower_batch_is_cast_up_to_table_type() -> None:
    assert evolve(replace(TABLE, "total", pa.int32())) == TABLE
    assert evolve(replace(TABLE, "total", pa.int8())) == TABLE
    assert evolve(replace(TABLE, "price", pa.decimal128(6, 1))) == TABLE


def test_decimal_widening_keeps_integer_digits_and_scale() -> None:
    assert evolve(replace(TABLE, "price", pa.decimal128(12, 4))).field("price").type == pa.decimal128(12, 4)
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(replace(TABLE, "price", pa.decimal128(12, 1)))
    assert err.value.problems == [
        "column 'price' cannot change type from decimal128(10, 2) (table) to decimal128(12, 1) (batch)"
    ]


@pytest.mark.parametrize(
    ("column", "batch_type"),
    [
        ("total", pa.string()),
        ("amount", pa.bool_()),
        ("name", pa.binary()),
        ("ts", pa.int64()),
        ("ts", pa.timestamp("us")),
    ],
    ids=str,
)
def test_incompatible_type_change_names_column_and_both_types(column: str, batch_type: pa.DataType) -> None:
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(replace(TABLE, column, batch_type))
    (problem,) = err.value.problems
    table_type = TABLE.field(column).type
    assert (
        f"'{column}'" in problem
        and str(table_type) in problem
        and str(normalize_arrow_schema(pa.schema([(column, batch_type)])).field(0).type) in problem
    )


def test_float_into_long_table_widens_table_to_float_by_avro_rules() -> None:
    # long -> float is an Avro promotion, so a float batch makes the table float (never back to long).
    assert evolve(replace(TABLE, "total", pa.float32())).field("total").type == pa.float32()


def test_timestamp_zone_and_unit_do_not_matter() -> None:
    assert evolve(replace(TABLE, "ts", pa.timestamp("ns", "America/Chicago"))) == TABLE


def test_missing_column_is_rejected_unless_allowed() -> None:
    batch = TABLE.remove(TABLE.get_field_index("name"))
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(batch)
    (problem,) = err.value.problems
    assert "'name'" in problem and "not in the batch" in problem
    assert evolve(batch, allow_missing=["name"]) == TABLE


def test_key_type_change_is_rejected_even_when_widening() -> None:
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(replace(TABLE, "id", pa.int64()))
    assert err.value.problems == [
        "record key field 'id' cannot change type from int32 (table) to int64 (batch)"
    ]
    # int16 stores as int, so it is the same key type.
    assert evolve(replace(TABLE, "id", pa.int16())) == TABLE


def test_partition_type_change_and_missing_keys_are_rejected() -> None:
    with pytest.raises(
        SchemaEvolutionError,
        match=r"partition field 'part' cannot change type from string \(table\) to int32 \(batch\)",
    ):
        evolve(replace(TABLE, "part", pa.int32()))
    batch = TABLE.remove(TABLE.get_field_index("id"))
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(batch)
    assert err.value.problems == ["record key field 'id' is missing from the batch"]
    with pytest.raises(SchemaEvolutionError, match="record key field 'nope' is missing"):
        evolve_schema(None, TABLE, key_fields=["nope"])
    with pytest.raises(SchemaEvolutionError, match="partition field 'p2' is not a column of the table"):
        evolve(pa.schema([*TABLE, ("p2", pa.string())]), partition_fields=["part", "p2"])


def test_all_problems_are_reported_together() -> None:
    batch = replace(replace(TABLE, "id", pa.string()), "total", pa.string()).remove(
        TABLE.get_field_index("name")
    )
    with pytest.raises(SchemaEvolutionError) as err:
        evolve(batch)
    problems = err.value.problems
    assert len(problems) == 3
    assert any(p.startswith("column 'name'") for p in problems)
    assert "column 'total' cannot change type from int64 (table) to string (batch)" in problems
    assert "record key field 'id' cannot change type from int32 (table) to string (batch)" in problems


def test_nested_struct_fields_evolve_recursively() -> None:
    batch = replace(TABLE, "s", pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", pa.date32())]))
    out = evolve(batch)
    assert out.field("s").type == pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", pa.date32())])
    missing = replace(TABLE, "s", pa.struct([("a", pa.int32())]))
    with pytest.raises(SchemaEvolutionError, match=r"'s\.b'"):
        evolve(missing)
    assert evolve(missing, allow_missing=["s.b"]) == TABLE
    with pytest.raises(
        SchemaEvolutionError, match=r"'s\.a' cannot change type from int32 \(table\) to string \(batch\)"
    ):
        evolve(replace(TABLE, "s", pa.struct([("a", pa.string()), ("b", pa.string())])))


def test_list_and_map_elements_evolve() -> None:
    table = pa.schema(
        [
            ("id", pa.int32()),
            ("l", pa.list_(pa.struct([("x", pa.int32())]))),
            ("m", pa.map_(pa.string(), pa.float32())),
        ]
    )
    batch = pa.schema(
        [
            ("id", pa.int32()),
            (
                "l",
                pa.large_list(
                    pa.field("item", pa.struct([("x", pa.int32()), ("y", pa.string())]), nullable=False)
                ),
            ),
            ("m", pa.map_(pa.large_string(), pa.float64())),
        ]
    )
    out = evolve_schema(table, batch, key_fields=["id"])
    assert out.field("l").type == pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))
    assert out.field("m").type == pa.map_(pa.string(), pa.float64())
    bad = batch.set(2, pa.field("m", pa.map_(pa.string(), pa.string())))
    with pytest.raises(SchemaEvolutionError, match=r"'m\.value' cannot change type from float"):
        evolve_schema(table, bad, key_fields=["id"])


def test_nested_key_field() -> None:
    table = pa.schema([("k", pa.struct([("id", pa.int64())])), ("v", pa.string())])
    assert evolve_schema(table, table, key_fields=["k.id"]) == table
    bad = pa.schema([("k", pa.struct([("id", pa.string())])), ("v", pa.string())])
    with pytest.raises(SchemaEvolutionError, match=r"record key field 'k\.id' cannot change type"):
        evolve_schema(table, bad, key_fields=["k.id"])


def test_evolved_schema_converts_to_avro() -> None:
    out = evolve(pa.schema([*TABLE, ("new", pa.list_(pa.decimal128(5, 2)))]))
    avro = avro_schema_from_arrow(out, "t")
    fastavro.parse_schema(avro)
    assert arrow_schema_from_avro(avro) == out


# ------------------------------------------------------------------------------------------------------
# Java Hudi 0.14 sample tables
# ------------------------------------------------------------------------------------------------------


def _java_properties(path: Path) -> dict[str, str]:
    """Enough of java.util.Properties for hoodie.properties (one key=value a line, backslash escapes)."""
    props = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "!")):
            continue
        key, _, value = line.partition("=")
        out, i = [], 0
        while i < len(value):
            if value[i] == "\\" and i + 1 < len(value):
                i += 1
            out.append(value[i])
            i += 1
        props[key.strip()] = "".join(out)
    return props


@pytest.fixture(scope="module")
def sample_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    zips = sorted(SAMPLES_DIR.glob("*.zip"))
    if not zips:
        pytest.skip(f"no sample tables in {SAMPLES_DIR}")
    root = tmp_path_factory.mktemp("hudi_samples")
    for z in zips:
        with zipfile.ZipFile(z) as zf:
            zf.extractall(root)
    tables = {
        p.parent.parent.name: p.parent.parent
        for p in root.glob("*/.hoodie/hoodie.properties")
        if "__MACOSX" not in p.parts
    }
    assert tables, "sample zips hold no tables"
    return tables


def _commit_schemas(table: Path) -> list[tuple[str, str]]:
    out = []
    for f in sorted((table / ".hoodie").iterdir()):
        if f.suffix in (".commit", ".replacecommit") and f.is_file():
            text = json.loads(f.read_text())["extraMetadata"]["schema"]
            out.append((f.name, text))
    return out


def _base_files(table: Path) -> list[Path]:
    return sorted(p for p in table.rglob("*.parquet") if ".hoodie" not in p.parts)


@pytest.mark.compat
def test_samples_have_commits(sample_tables: dict[str, Path]) -> None:
    with_commits = [name for name, path in sample_tables.items() if _commit_schemas(path)]
    assert len(with_commits) >= 3


@pytest.mark.compat
def test_commit_schemas_are_reproduced_exactly(sample_tables: dict[str, Path]) -> None:
    for name, path in sample_tables.items():
        table_name = _java_properties(path / ".hoodie" / "hoodie.properties")["hoodie.table.name"]
        for commit, text in _commit_schemas(path):
            stored = parse_avro_schema(text)
            ours = avro_schema_from_arrow(arrow_schema_from_avro(stored), table_name)
            assert ours == stored, (name, commit)
            assert avro_schema_to_json(ours) == text, (name, commit)
            fastavro.parse_schema(ours)


@pytest.mark.compat
def test_create_schema_matches_commits_and_java_form(sample_tables: dict[str, Path]) -> None:
    for name, path in sample_tables.items():
        props = _java_properties(path / ".hoodie" / "hoodie.properties")
        create = parse_avro_schema(props["hoodie.table.create.schema"])
        arrow = arrow_schema_from_avro(create)
        ours = avro_schema_from_arrow(arrow, props["hoodie.table.name"])
        assert to_create_schema_form(ours) == create, name
        assert avro_schema_to_json(to_create_schema_form(ours)) == props["hoodie.table.create.schema"], name
        for commit, text in _commit_schemas(path):
            assert arrow_schema_from_avro(text) == arrow, (name, commit)


@pytest.mark.compat
def test_avro_schema_matches_parquet_data(sample_tables: dict[str, Path]) -> None:
    checked = 0
    for name, path in sample_tables.items():
        props = _java_properties(path / ".hoodie" / "hoodie.properties")
        commits = _commit_schemas(path)
        if not commits:
            continue
        arrow = arrow_schema_from_avro(commits[-1][1])
        for f in _base_files(path):
            physical = pq.read_schema(f)
            assert physical.names[:5] == list(META_COLUMNS)
            data = pa.schema([fld for fld in physical if fld.name not in META_COLUMNS])
            assert data.names == arrow.names, (name, f.name)
            for ours, theirs in zip(arrow, data, strict=True):
                assert shape(ours.type) == shape(theirs.type), (name, f.name, ours.name)
            # Casting the file's data to our schema succeeds (Java's 2-level lists, map naming).
            table = pq.read_table(f).select(arrow.names).cast(arrow)
            assert table.schema == arrow
            # The file's physical schema evolves into the same table schema.
            assert (
                evolve_schema(arrow, physical, key_fields=props["hoodie.table.recordkey.fields"].split(","))
                == arrow
            )
            # The Avro footer Java wrote is our schema with meta columns.
            footer = json.loads(pq.read_metadata(f).metadata[b"parquet.avro.schema"])
            assert (
                avro_schema_from_arrow(arrow, props["hoodie.table.name"], include_meta_columns=True) == footer
            )
            checked += 1
    assert checked > 0
