"""How SQL statements pick their write operation from session / table options (no Spark)."""

from __future__ import annotations

import pytest

from hoodpy.config import HoodieConfig
from sql_ext.dml import insert_operation
from hoodpy.write.operation import WriteOperation


@pytest.mark.parametrize(("options", "operation"), [
    ({}, WriteOperation.UPSERT),
    ({"hoodie.spark.sql.insert.into.operation": "insert"}, WriteOperation.INSERT),
    ({"hoodie.spark.sql.insert.into.operation": "BULK_INSERT"}, WriteOperation.BULK_INSERT),
    ({"hoodie.sql.insert.mode": "strict"}, WriteOperation.INSERT),
    ({"hoodie.sql.insert.mode": "non-strict"}, WriteOperation.INSERT),
    ({"hoodie.sql.insert.mode": "upsert"}, WriteOperation.UPSERT),
    ({"hoodie.sql.insert.mode": "strict", "hoodie.spark.sql.insert.into.operation": "upsert"}, WriteOperation.UPSERT),
    ({"hoodie.datasource.write.operation": "insert", "hoodie.spark.sql.insert.into.operation": "upsert"},
     WriteOperation.INSERT),
])
def test_insert_into_operation(options, operation):
    assert insert_operation(HoodieConfig.of(options)) == operation
