"""Schema evolution on write: a new nullable column evolves the table (old rows read null for it), and an
int column widens to long."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, latest_files, read_base_file, rows

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

BIG = 2**40


@pytest.fixture(scope="module")
def evolved(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("evolve") / "t")
    t = HoodieTable.create(spark, path, table_name="evolve_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    s = SimpleNamespace(t=t)
    s.c1 = t.upsert(spark.createDataFrame([(i, "ab"[i % 2], 1, i * 10) for i in range(6)],
                                          "id int, p string, ts long, n int"))
    s.files1 = latest_files(t)

    # Partition a only: an update, an insert, and a new column.
    s.c2 = t.upsert(spark.createDataFrame([(0, "a", 2, 0, "e0"), (100, "a", 2, 1000, "e100")],
                                          "id int, p string, ts long, n int, extra string"))
    s.schema2 = t.read().schema
    s.rows2 = rows(t.read(), "id", "p", "n", "extra")

    # n widens from int to long, again in partition a only (b's base file still holds int32).
    s.c3 = t.upsert(spark.createDataFrame([(2, "a", 3, BIG, "e2")],
                                          "id int, p string, ts long, n long, extra string"))
    s.schema3 = t.read().schema
    s.rows3 = rows(t.read(), "id", "p", "n", "extra")
    s.files3 = latest_files(t)
    return s


def _commit_schema_fields(result):
    return [f["name"] for f in json.loads(result.metadata.extra_metadata["schema"])["fields"]]


def test_new_nullable_column_evolves_the_table(evolved):
    s = evolved
    assert s.schema2.fieldNames()[-1] == "extra"
    assert s.schema2["extra"].nullable
    assert _commit_schema_fields(s.c2)[-1] == "extra"
    assert s.rows2 == [
        (0, "a", 0, "e0"), (1, "b", 10, None), (2, "a", 20, None), (3, "b", 30, None), (4, "a", 40, None),
        (5, "b", 50, None), (100, "a", 1000, "e100"),
    ]


def test_old_rows_in_rewritten_files_get_the_new_column_as_null(evolved):
    s = evolved
    (path,) = [p for (part, _), p in latest_files(s.t).items() if part == "b"]
    assert path == next(p for (part, _), p in s.files1.items() if part == "b")  # b never rewritten
    assert "extra" not in read_base_file(s.t, path).column_names
    (path_a,) = [p for (part, _), p in s.files3.items() if part == "a"]
    assert read_base_file(s.t, path_a).column("extra").to_pylist().count(None) == 1  # id 4, carried over


def test_int_widens_to_long(evolved):
    s = evolved
    assert s.schema3["n"].dataType.simpleString() == "bigint"
    assert s.rows3 == [
        (0, "a", 0, "e0"), (1, "b", 10, None), (2, "a", BIG, "e2"), (3, "b", 30, None), (4, "a", 40, None),
        (5, "b", 50, None), (100, "a", 1000, "e100"),
    ]
    assert (s.c3.num_update_writes, s.c3.files_updated) == (1, 1)
