"""A table hoodpy creates at version 9 records what Java Hudi 1.1 records in hoodie.properties (the keys of
the v9 fixtures): the ordering field under its version-9 name, the table format, the key generator by type."""

import zipfile

import pytest

from hoodpy.config.properties import parse_properties
from hoodpy.config.table_version import versioned_properties
from java_samples import SAMPLES_DIR

V9_FIXTURE = "hudi-rs/sample_table/cow/v9_txns_simple_nometa.zip"


def _fixture_properties() -> dict[str, str]:
    path = SAMPLES_DIR / V9_FIXTURE
    if not path.exists():
        pytest.skip(f"sample {path} not available")
    with zipfile.ZipFile(path) as z:
        [name] = [n for n in z.namelist() if n.endswith(".hoodie/hoodie.properties")]
        return parse_properties(z.read(name).decode("utf-8"))


def test_version_9_properties_of_a_new_table():
    base = {"hoodie.table.version": "6", "hoodie.timeline.layout.version": "1", "hoodie.table.precombine.field": "ts",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"}
    v9 = versioned_properties(base, 9, key_generator_type="SIMPLE")
    assert v9 == {"hoodie.table.version": "9", "hoodie.timeline.layout.version": "2",
                  "hoodie.table.initial.version": "9", "hoodie.timeline.path": "timeline",
                  "hoodie.timeline.history.path": "history", "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
                  "hoodie.table.ordering.fields": "ts", "hoodie.table.format": "native",
                  "hoodie.table.keygenerator.type": "SIMPLE"}
    fixture = _fixture_properties()
    version_keys = {k for k in v9 if k not in ("hoodie.table.keygenerator.class",)}
    assert version_keys <= set(fixture)  # every key Java 1.1 writes, under the names it writes
    assert {k: fixture[k] for k in ("hoodie.table.version", "hoodie.timeline.layout.version",
                                   "hoodie.table.initial.version", "hoodie.table.format",
                                   "hoodie.record.merge.mode", "hoodie.timeline.path",
                                   "hoodie.timeline.history.path")} == {
        k: v9[k] for k in ("hoodie.table.version", "hoodie.timeline.layout.version", "hoodie.table.initial.version",
                           "hoodie.table.format", "hoodie.record.merge.mode", "hoodie.timeline.path",
                           "hoodie.timeline.history.path")}
    absent = {"hoodie.table.precombine.field", "hoodie.record.merge.strategy.id", "hoodie.table.keygenerator.class",
              "hoodie.compaction.payload.class"}
    assert not absent & set(fixture) and not absent & set(v9)
    no_ordering = versioned_properties({**base, "hoodie.table.precombine.field": ""}, 9)
    assert no_ordering["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert "hoodie.table.ordering.fields" not in no_ordering
