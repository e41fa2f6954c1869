"""Catalog tables registered by Java Hudi (provider hudi, or hive sync's Hudi input format) are recognised as
tables hoodpy reads and writes; other tables are not described at all (no JVM: the catalog's commands are
answered by a fake)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from sql_ext.catalog import HUDI_PROVIDER_PROPERTY, SparkCatalog, TableName


class FakeSession:
    def __init__(self, tables: dict[str, dict]):
        self.tables = tables
        self.catalog = SimpleNamespace(tableExists=lambda name: name.replace("`", "") in self.tables,
                                       currentDatabase=lambda: "db")
        self.commands: list[str] = []

    def sql(self, text: str):
        self.commands.append(text)
        name = text.split()[-1].replace("`", "")
        table = self.tables[name]
        if text.startswith("SHOW TBLPROPERTIES"):
            rows = [{"key": k, "value": v} for k, v in table["properties"].items()]
        else:
            rows = [(k, v, "") for k, v in table["describe"].items()]
        return SimpleNamespace(collect=lambda: rows)


@pytest.fixture
def hudi_base(tmp_path) -> Path:
    base = tmp_path / "java_table"
    (base / ".hoodie").mkdir(parents=True)
    (base / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=java_table\n")
    return base


def describe(provider: str, location: str, input_format: str | None = None) -> dict:
    rows = {"id": "int", "": "", "# Detailed Table Information": "", "Provider": provider, "Location": location}
    if input_format:
        rows["InputFormat"] = input_format
    return rows


def test_spark_sql_hudi_table_is_recognised(hudi_base):
    fake = FakeSession({"db.j": {"properties": {"primaryKey": "id", "type": "cow"},
                                 "describe": describe("hudi", f"file:{hudi_base}")}})
    entry = SparkCatalog(fake, fake.sql).lookup("db.j")
    assert entry is not None and entry.base_path == str(hudi_base)
    assert entry.properties[HUDI_PROVIDER_PROPERTY] == "hudi" and not entry.is_hoodpy
    assert entry.write_options() == {}


def test_hive_synced_table_is_recognised_by_its_input_format(hudi_base):
    fake = FakeSession({"db.h": {"properties": {"last_commit_time_sync": "20240101000000000",
                                                "hoodie.parquet.small.file.limit": "0"},
                                 "describe": describe("hive", f"file://{hudi_base}",
                                                      "org.apache.hudi.hadoop.HoodieParquetInputFormat")}})
    entry = SparkCatalog(fake, fake.sql).lookup_qualified(TableName("db", "h"))
    assert entry.base_path == str(hudi_base)
    assert entry.write_options() == {"hoodie.parquet.small.file.limit": "0"}


def test_other_tables_are_not_hudi_tables(hudi_base, tmp_path):
    fake = FakeSession({
        "db.plain": {"properties": {"owner": "me"}, "describe": describe("parquet", f"file:{hudi_base}")},
        "db.pq": {"properties": {"type": "x"}, "describe": describe("parquet", f"file:{hudi_base}")},
        "db.gone": {"properties": {"primaryKey": "id"}, "describe": describe("hudi", f"file:{tmp_path}/none")},
    })
    catalog = SparkCatalog(fake, fake.sql)
    assert [catalog.lookup(n) for n in ("db.plain", "db.pq", "db.gone")] == [None, None, None]
    # A table without Hudi's markers costs one command only: it is never described.
    assert [c.split()[0] for c in fake.commands] == ["SHOW", "SHOW", "DESCRIBE", "SHOW", "DESCRIBE"]
