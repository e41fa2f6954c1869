"""on_schema_change with changed column types: Hudi's promotion rules (no Spark session needed)."""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    DateType, DecimalType, DoubleType, FloatType, IntegerType, LongType, StringType,
)

from dbt.adapters.hoodpy.schema_sync import plan_type_changes
from hoodpy.errors import SchemaEvolutionError


@pytest.mark.parametrize(("old", "new"), [
    (IntegerType(), LongType()), (IntegerType(), DoubleType()), (LongType(), FloatType()),
    (FloatType(), DoubleType()), (DecimalType(10, 2), DecimalType(12, 3)),
])
def test_widening_is_left_to_the_write(old, new):
    assert plan_type_changes({"v": old}, {"v": new}, {}) == []


@pytest.mark.parametrize("old", [IntegerType(), LongType(), DoubleType(), DecimalType(10, 2), DateType()])
def test_numbers_and_dates_to_string_rebuild(old):
    assert plan_type_changes({"id": IntegerType(), "v": old}, {"id": IntegerType(), "v": StringType()}, {}) == ["v"]


@pytest.mark.parametrize(("old", "new"), [
    (LongType(), IntegerType()), (DoubleType(), FloatType()), (StringType(), IntegerType()),
    (DecimalType(12, 3), DecimalType(10, 2)), (DoubleType(), LongType()),
])
def test_narrowing_fails_naming_the_column_and_types(old, new):
    with pytest.raises(SchemaEvolutionError) as info:
        plan_type_changes({"v": old, "w": IntegerType()}, {"v": new, "w": IntegerType()}, {})
    message = str(info.value)
    assert f"column 'v' cannot change type from {old.simpleString()} (table) to {new.simpleString()} (model)" \
        in message and "'w'" not in message


def test_key_and_partition_columns_keep_their_type():
    with pytest.raises(SchemaEvolutionError, match="record key column 'id' cannot change type from int"):
        plan_type_changes({"id": IntegerType()}, {"id": LongType()}, {"id": "record key"})
    with pytest.raises(SchemaEvolutionError, match="partition column 'city'"):
        plan_type_changes({"city": StringType()}, {"city": IntegerType()}, {"city": "partition"})
