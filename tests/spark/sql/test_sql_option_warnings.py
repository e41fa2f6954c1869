"""hoodie.* keys in SQL TBLPROPERTIES: those hoodpy does not honour warn naming the key, and a payload class
hoodpy cannot merge as is refused at the first write, naming it, with the table left empty."""

from __future__ import annotations

import warnings

import pytest

from hoodpy.config import registry
from hoodpy.errors import HoodieConfigWarning, InvalidConfigError

pytestmark = pytest.mark.spark


def test_tblproperties_hoodpy_does_not_honour_warn_naming_the_key(hoodpy_spark, database, monkeypatch):
    monkeypatch.setattr(registry, "_warned", set())
    table = f"{database}.warned"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hoodpy_spark.sql(f"""CREATE TABLE {table} (id INT, ts BIGINT) USING hoodpy TBLPROPERTIES (
            primaryKey = 'id', preCombineField = 'ts', 'hoodie.metadata.enable' = 'true',
            'hoodie.datasource.hive_sync.enable' = 'true', 'hoodie.parquet.small.file.limit' = '0')""")
        hoodpy_spark.sql(f"INSERT INTO {table} VALUES (1, 1)")
    messages = [str(w.message) for w in caught if issubclass(w.category, HoodieConfigWarning)]
    assert any("hoodie.datasource.hive_sync.enable" in m for m in messages)
    assert not any("hoodie.metadata.enable" in m for m in messages)  # honoured: the metadata table is kept
    assert not any("hoodie.parquet.small.file.limit" in m for m in messages)
    assert [tuple(r) for r in hoodpy_spark.sql(f"SELECT id, ts FROM {table}").collect()] == [(1, 1)]


def test_an_unsupported_payload_class_in_tblproperties_is_refused_at_the_first_write(hoodpy_spark, database):
    table = f"{database}.partial"
    payload = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    hoodpy_spark.sql(f"""CREATE TABLE {table} (id INT, ts BIGINT) USING hoodpy TBLPROPERTIES (
        primaryKey = 'id', preCombineField = 'ts', 'hoodie.datasource.write.payload.class' = '{payload}')""")
    with pytest.raises(InvalidConfigError, match=payload):
        hoodpy_spark.sql(f"INSERT INTO {table} VALUES (1, 1)")
    assert hoodpy_spark.sql(f"SELECT * FROM {table}").count() == 0
