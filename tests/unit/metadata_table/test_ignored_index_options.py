"""An index option given with hoodie.metadata.enable=false is not silently ignored: a warning names both keys."""

from __future__ import annotations

import logging

from hoodpy.config import HoodieConfig
from hoodpy.metadata_table.writer import MetadataTableWriter
from hoodpy.storage import Storage


def _warned(tmp_path, caplog, options):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hoodpy.metadata_table.writer"):
        ignored = MetadataTableWriter(Storage(str(tmp_path)), HoodieConfig.of(options)).warn_ignored_indexes()
    return ignored, " ".join(r.getMessage() for r in caplog.records)


def test_record_index_and_column_stats_with_metadata_off_are_warned(tmp_path, caplog):
    ignored, text = _warned(tmp_path, caplog, {"hoodie.metadata.enable": "false",
                                               "hoodie.metadata.record.index.enable": "true"})
    assert ignored == ["hoodie.metadata.record.index.enable"]
    assert "hoodie.metadata.record.index.enable=true" in text and "hoodie.metadata.enable=false" in text

    ignored, text = _warned(tmp_path, caplog, {"hoodie.metadata.enable": "false",
                                               "hoodie.metadata.record.index.enable": "true",
                                               "hoodie.metadata.index.column.stats.enable": "true"})
    assert ignored == ["hoodie.metadata.record.index.enable", "hoodie.metadata.index.column.stats.enable"]
    assert "hoodie.metadata.index.column.stats.enable=true" in text and "hoodie.metadata.enable=false" in text


def test_no_warning_when_nothing_is_ignored(tmp_path, caplog):
    for options in ({"hoodie.metadata.enable": "false"},
                    {"hoodie.metadata.enable": "false", "hoodie.metadata.record.index.enable": "false"},
                    {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true"}):
        assert _warned(tmp_path, caplog, options) == ([], "")
