"""Record keys made in the write task (hoodpy.write.task_keys) equal the key generator's, placeholders and
invalid keys included; fields whose string form Arrow and Spark print differently are left to the JVM."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodpy.keygen import COMPLEX_KEY_GENERATOR, NONPARTITIONED_KEY_GENERATOR, SIMPLE_KEY_GENERATOR, KeyGenerator
from hoodpy.write.task_keys import keys_in_task, record_keys

ROWS = pa.table({"id": pa.array([1, None, 3, 4, -5], pa.int64()), "name": ["a", "b", None, "", None],
                 "flag": [True, False, None, True, False], "x": [1.5, 2.0, 3.0, 4.0, 5.0]})


def _keygen(fields, klass=COMPLEX_KEY_GENERATOR) -> KeyGenerator:
    return KeyGenerator(tuple(fields), (), klass)


@pytest.mark.parametrize("fields", [("id", "name"), ("name", "flag"), ("id",), ("name", "id", "flag")])
def test_composite_keys_are_the_key_generators(fields):
    keygen = _keygen(fields)
    keys, invalid = record_keys(keygen, ROWS)
    want = [keygen.record_key_of(r) for r in ROWS.to_pylist()]
    # ComplexKeyGenerator: "name:value" joined by commas, null and empty values as placeholders.
    assert keys.to_pylist() == want
    blank = [all(r[f] is None or r[f] == "" for f in fields) for r in ROWS.to_pylist()]
    assert invalid.to_pylist() == blank


def test_composite_placeholders_spelled_out():
    keys, invalid = record_keys(_keygen(("id", "name")), ROWS)
    assert keys.to_pylist()[1:4] == ["id:__null__,name:b", "id:3,name:__null__", "id:4,name:__empty__"]
    assert invalid.to_pylist() == [False] * 5


@pytest.mark.parametrize("klass", [SIMPLE_KEY_GENERATOR, NONPARTITIONED_KEY_GENERATOR])
def test_simple_keys_are_the_fields_string_and_blank_ones_are_invalid(klass):
    keys, invalid = record_keys(_keygen(("name",), klass), ROWS)
    assert keys.to_pylist() == ["a", "b", None, "", None]
    assert invalid.to_pylist() == [False, False, True, True, True]
    keys, invalid = record_keys(_keygen(("id",), klass), ROWS)
    assert keys.to_pylist() == ["1", None, "3", "4", "-5"] and invalid.to_pylist() == [False, True, False, False,
                                                                                          False]


def test_only_fields_printed_alike_are_made_in_the_task():
    schema = ROWS.schema
    assert keys_in_task(_keygen(("id", "name", "flag")), schema)
    assert not keys_in_task(_keygen(("id", "x")), schema)  # a double prints as "1.5" in both, but 2.0 as "2"
    assert not keys_in_task(_keygen(("missing",)), schema)
    assert not keys_in_task(_keygen(("a.b",)), pa.schema([("a.b", pa.int64())]))  # a nested reference
    assert not keys_in_task(_keygen(()), schema)  # generated keys
