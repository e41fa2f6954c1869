"""The write's projections built as SQL text (hoodpy.write.projection) give what the Column API gives: record
keys (simple and composite, with nulls, empty strings, quotes and backslashes), and the batch conformed to the
table's schema (casts where types differ, typed nulls for missing columns, a name with a dot kept whole)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from hoodpy.write import records as rec
from hoodpy.write.projection import conformed

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def batch(spark):
    return spark.createDataFrame([(1, "a", None), (None, "", "x"), (None, None, None), (2, "it's", "b\\c")],
                                 "id int, s string, `n.m` string")


@pytest.mark.parametrize("fields", [["id"], ["s"], ["id", "s"]])
def test_record_keys_as_sql_equal_the_column_api(batch, fields, monkeypatch):
    keygen = SimpleNamespace(record_key_fields=fields, composite_record_key=len(fields) > 1)
    key, invalid = rec.record_key_column(keygen)
    got = batch.select(key.alias("k"), invalid.alias("i")).collect()
    monkeypatch.setattr(rec, "field_reference", lambda name: None)  # the Column API path
    key, invalid = rec.record_key_column(keygen)
    assert got == batch.select(key.alias("k"), invalid.alias("i")).collect()
    if fields == ["id", "s"]:
        assert [r.k for r in got] == ["id:1,s:a", "id:__null__,s:__empty__", "id:__null__,s:__null__",
                                      "id:2,s:it's"]
        assert [r.i for r in got] == [False, True, True, False]


def test_conformed_casts_fills_and_orders_columns(batch):
    target = StructType([StructField("n.m", StringType()), StructField("id", LongType()),
                         StructField("missing", IntegerType())])
    out = conformed(batch, ("s",), target)
    assert out.columns == ["s", "n.m", "id", "missing"]
    assert [f.dataType for f in out.schema.fields] == [StringType(), StringType(), LongType(), IntegerType()]
    assert [tuple(r) for r in out.collect()] == [("a", None, 1, None), ("", "x", None, None),
                                                 (None, None, None, None), ("it's", "b\\c", 2, None)]
