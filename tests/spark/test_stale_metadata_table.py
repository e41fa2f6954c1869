"""A table with a metadata table written by another writer: a hoodpy write or rollback with
hoodie.metadata.enable=false removes it inside its commit (folder gone, hoodie.table.metadata.partitions
emptied, checksum valid) and hudi-rs reads the same rows with and without hoodie.metadata.enable; a write refused
for an unsupported payload class leaves everything as it was; the Java v6 samples open without a configuration
warning."""

from __future__ import annotations

import logging
import warnings
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, tree
from hudi import HudiReadOptions, HudiTableBuilder

from hoodpy.config.properties import load_table_properties, save_table_properties, table_checksum
from hoodpy.errors import HoodieConfigWarning, InvalidConfigError
from hoodpy.config import registry
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from java_samples import SAMPLES_DIR, unzip_sample

pytestmark = [pytest.mark.spark, pytest.mark.compat]

DDL = "id int, p string, ts long, v string"
MDT = ".hoodie/metadata"
OFF = {"hoodie.metadata.enable": "false"}
# A Java-written metadata table to copy the layout (and bytes) from: its own hoodie.properties and the
# `files` partition. hudi-rs reads a version 6 table by listing, so what matters here is the layout.
MDT_SOURCE = SAMPLES_DIR / "hudi-rs" / "sample_table" / "cow" / "v9_txns_simple_meta.zip"


def add_metadata_table(path: str) -> None:
    """Give the table at ``path`` a metadata table as Java Hudi lays it out, and list it in hoodie.properties."""
    if not MDT_SOURCE.exists():
        pytest.skip(f"{MDT_SOURCE} not available")
    prefix = "v9_txns_simple_meta/.hoodie/metadata/"
    with zipfile.ZipFile(MDT_SOURCE) as z:
        for name in z.namelist():
            rel = name[len(prefix):] if name.startswith(prefix) else None
            if rel and not name.endswith("/") and (rel == ".hoodie/hoodie.properties" or rel.startswith("files/")):
                target = Path(path) / MDT / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
    storage = Storage(path)
    props = load_table_properties(storage)
    props["hoodie.table.metadata.partitions"] = "files"
    props["hoodie.table.metadata.partitions.inflight"] = ""
    save_table_properties(storage, props)


def hudi_rs_rows(path: str, metadata_enable: bool | None) -> list[tuple]:
    builder = HudiTableBuilder.from_base_uri(path)
    if metadata_enable is not None:
        builder = builder.with_option("hoodie.metadata.enable", str(metadata_enable).lower())
    batches = builder.build().read(HudiReadOptions())
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted((r["id"], r["p"], r["ts"], r["v"]) for r in rows)


@pytest.fixture
def table(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="mdt_t", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    return t


def test_a_write_with_the_metadata_table_off_removes_it_and_readers_agree(spark, table, caplog):
    path = table.base_path
    add_metadata_table(path)
    assert (Path(path) / MDT / "files").is_dir()
    with caplog.at_level(logging.WARNING, logger="hoodpy.timeline.metadata_table"):
        table.upsert(spark.createDataFrame([(2, "b", 2, "two'"), (3, "a", 1, "three")], DDL), options=OFF)
    assert not (Path(path) / MDT).exists()
    props = load_table_properties(Storage(path))
    assert props["hoodie.table.metadata.partitions"] == ""
    assert props["hoodie.table.metadata.partitions.inflight"] == ""
    assert props["hoodie.table.checksum"] == str(table_checksum("default", "mdt_t"))
    assert "mdt_t" in caplog.text and "metadata table" in caplog.text
    expected = [(1, "a", 1, "one"), (2, "b", 2, "two'"), (3, "a", 1, "three")]
    assert sorted(tuple(r) for r in table.read().select("id", "p", "ts", "v").collect()) == expected
    for enable in (None, False, True):
        assert hudi_rs_rows(path, enable) == expected


def test_a_rollback_with_the_metadata_table_off_removes_it_too(spark, table):
    c2 = table.upsert(spark.createDataFrame([(3, "a", 1, "three")], DDL))
    add_metadata_table(table.base_path)
    HoodieTable.for_path(spark, table.base_path, options=OFF).rollback_to_instant(c2.instant_time)
    assert not (Path(table.base_path) / MDT).exists()
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == ""
    assert hudi_rs_rows(table.base_path, True) == [(1, "a", 1, "one"), (2, "b", 1, "two")]


def test_an_unsupported_payload_class_is_refused_and_the_table_left_as_it_was(spark, table):
    add_metadata_table(table.base_path)
    before = tree(table.base_path)
    payload = "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload"
    with pytest.raises(InvalidConfigError) as e:
        table.upsert(spark.createDataFrame([(1, "a", 2, "x")], DDL),
                     options={"hoodie.datasource.write.payload.class": payload})
    assert payload in str(e.value)
    assert tree(table.base_path) == before  # metadata table included


def test_a_payload_class_in_hoodie_properties_decides_the_merge(spark, table):
    # OverwriteWithLatestAvroPayload is commit-time ordering: a lower ordering value still wins.
    storage = table.storage
    props = load_table_properties(storage)
    props["hoodie.compaction.payload.class"] = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    save_table_properties(storage, props)
    t = HoodieTable.for_path(spark, table.base_path)
    t.upsert(spark.createDataFrame([(1, "a", 0, "older but latest")], DDL))
    assert [tuple(r) for r in t.read().filter("id = 1").select("ts", "v").collect()] == [(0, "older but latest")]


@pytest.mark.parametrize("name", ["v6_nonpartitioned", "v6_complexkeygen_hivestyle",
                                  "v6_simplekeygen_nonhivestyle_overwritetable", "v6_empty"])
def test_java_v6_samples_open_without_a_configuration_warning(spark, tmp_path, monkeypatch, name):
    monkeypatch.setattr(registry, "_warned", set())
    path = unzip_sample(name, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", HoodieConfigWarning)
        HoodieTable.for_path(spark, str(path))
