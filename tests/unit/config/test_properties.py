from pathlib import Path

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.properties import (
    format_properties,
    load_table_properties,
    parse_properties,
    save_table_properties,
    table_checksum,
)
from hoodpy.config.storage import StorageConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError, MissingConfigError
from hoodpy.storage import Storage
from tests.conftest import unzip_sample


@pytest.mark.parametrize("sample", ["v6_empty", "v6_nonpartitioned", "v6_complexkeygen_hivestyle"])
def test_java_properties_parse_and_checksum_matches(sample, tmp_path):
    base = unzip_sample(sample, tmp_path)
    props = parse_properties((Path(base) / ".hoodie/hoodie.properties").read_text())
    assert props["hoodie.table.name"] == sample
    assert props["hoodie.table.create.schema"].startswith('{"type":"record"')  # '\:' unescaped
    assert int(props["hoodie.table.checksum"]) == table_checksum(props["hoodie.database.name"], sample)


def test_format_escapes_and_round_trips():
    props = {"hoodie.table.name": "t", "hoodie.table.create.schema": '{"a":"b=c"}', "k": "line\nbreak",
             "hoodie.table.checksum": "123"}
    text = format_properties(props)
    assert '{"a"\\:"b\\=c"}' in text
    assert text.strip().splitlines()[-1] == "hoodie.table.checksum=123"
    assert parse_properties(text) == props


def test_config_reads_aliases_defaults_and_rejects_bad_values():
    config = HoodieConfig.of({"hoodie.datasource.write.recordkey.field": "a, b"},
                             {"hoodie.parquet.max.file.size": "1000"})
    assert config.get(TableConfig.RECORD_KEY_FIELDS) == ("a", "b")
    assert config.get(StorageConfig.PARQUET_MAX_FILE_SIZE) == 1000
    assert config.get(StorageConfig.PARQUET_SMALL_FILE_LIMIT) == 104857600
    with pytest.raises(InvalidConfigError, match="hoodie.parquet.max.file.size"):
        HoodieConfig.of({"hoodie.parquet.max.file.size": "big"}).get(StorageConfig.PARQUET_MAX_FILE_SIZE)
    with pytest.raises(MissingConfigError, match="hoodie.table.name"):
        HoodieConfig().get(TableConfig.NAME)


def test_a_java_update_interrupted_after_deleting_hoodie_properties_reads_the_backup(tmp_path):
    storage = Storage(str(tmp_path))
    save_table_properties(storage, {"hoodie.table.name": "t", "hoodie.table.version": "6"})
    storage.write_bytes(".hoodie/hoodie.properties.backup", storage.read_bytes(".hoodie/hoodie.properties"))
    storage.delete(".hoodie/hoodie.properties")
    assert load_table_properties(storage) == {"hoodie.table.name": "t", "hoodie.table.version": "6"}
    storage.delete(".hoodie/hoodie.properties.backup")
    assert load_table_properties(storage) is None


def test_load_parses_each_content_once_and_sees_changes(tmp_path, monkeypatch):
    """load_table_properties parses a given hoodie.properties content once (a write reads it a dozen times), yet
    every call reads the file: a rewrite is seen at once, and each caller gets a dict of its own."""
    from hoodpy.config import properties as props_module
    from hoodpy.storage import Storage

    storage = Storage(str(tmp_path))
    storage.write_bytes(props_module.PROPERTIES_FILE, b"hoodie.table.name=t1\nhoodie.table.version=6\n")
    calls = []
    parse = props_module.parse_properties
    monkeypatch.setattr(props_module, "parse_properties", lambda text: calls.append(text) or parse(text))
    props_module._parsed.cache_clear()
    first = props_module.load_table_properties(storage)
    first["mutated"] = "x"
    assert props_module.load_table_properties(storage) == {"hoodie.table.name": "t1", "hoodie.table.version": "6"}
    assert len(calls) == 1
    storage.write_bytes(props_module.PROPERTIES_FILE, b"hoodie.table.name=t2\n")
    assert props_module.load_table_properties(storage) == {"hoodie.table.name": "t2"}
    assert props_module.load_table_properties(storage) == {"hoodie.table.name": "t2"}
    assert calls == ["hoodie.table.name=t1\nhoodie.table.version=6\n", "hoodie.table.name=t2\n"]
