"""No silently ignored options: unknown hoodie.* keys warn naming the key (once per process), honoured keys and
the Java sample tables' properties do not, values that would change results are refused, and
docs/options.md is the registry's list."""

from __future__ import annotations

import warnings

import pytest

from hoodpy.config import HoodieConfig, ordering_fields
from hoodpy.config import registry
from hoodpy.config.properties import load_table_properties
from hoodpy.config.registry import check_options, check_table_properties, options_markdown
from hoodpy.config.write import COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING, WriteConfig, merge_mode
from hoodpy.config.sql import TableOptions
from hoodpy.config.table import TableConfig
from hoodpy.errors import HoodieConfigWarning, InvalidConfigError
from hoodpy.storage import Storage
from java_samples import REPO, unzip_sample

V6_SAMPLES = ("v6_nonpartitioned", "v6_complexkeygen_hivestyle", "v6_simplekeygen_nonhivestyle_overwritetable",
              "v6_empty")


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test sees first warnings: the once-per-process memory starts empty."""
    monkeypatch.setattr(registry, "_warned", set())


def config_warnings(fn, *args) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [str(w.message) for w in caught if issubclass(w.category, HoodieConfigWarning)]


def test_an_unknown_key_warns_naming_it_once_per_process():
    options = {"hoodie.datasource.hive_sync.enable": "true", "spark.sql.shuffle.partitions": "4"}
    first = config_warnings(check_options, options)
    assert len(first) == 1 and "hoodie.datasource.hive_sync.enable" in first[0]
    assert config_warnings(check_options, options) == []


@pytest.mark.parametrize("key, value", [
    ("hoodie.cleaner.commits.retained", "3"),  # a declared key
    ("hoodie.datasource.write.recordkey.field", "id"),  # an alias
    ("hoodie.compaction.payload.class", "org.apache.hudi.common.model.DefaultHoodieRecordPayload"),
    ("hoodie.metadata.enable", "false"),
    ("hoodie.metadata.enable", "true"),  # honoured: hoodpy maintains the files partition
    ("hoodie.metadata.compact.max.delta.commits", "5"),
    ("hoodie.metadata.index.column.stats.enable", "true"),  # honoured: hoodpy maintains column_stats
    ("hoodie.table.initial.version", "9"),  # a table property hoodpy has nothing to do for
])
def test_a_honoured_key_does_not_warn(key, value):
    assert config_warnings(check_options, {key: value}) == []


def test_metadata_partitions_hoodpy_does_not_maintain_warn():
    messages = config_warnings(check_options, {"hoodie.metadata.index.partition.stats.enable": "true"})
    assert len(messages) == 1 and "hoodie.metadata.index.partition.stats.enable" in messages[0]


def test_an_unknown_table_property_warns_naming_key_and_table():
    messages = config_warnings(check_table_properties, {"hoodie.table.multiple.base.file.formats.enable": "true"}, "trips")
    assert len(messages) == 1 and "hoodie.table.multiple.base.file.formats.enable" in messages[0] and "trips" in messages[0]


@pytest.mark.parametrize("name", V6_SAMPLES)
def test_java_v6_sample_properties_warn_about_nothing(name, tmp_path):
    props = load_table_properties(Storage(str(unzip_sample(name, tmp_path))))
    assert props and config_warnings(check_table_properties, props, name) == []


@pytest.mark.parametrize("payload, mode", [
    ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", EVENT_TIME_ORDERING),
    ("org.apache.hudi.common.model.EventTimeAvroPayload", EVENT_TIME_ORDERING),
    ("org.apache.hudi.common.model.OverwriteWithLatestAvroPayload", COMMIT_TIME_ORDERING),
])
def test_payload_classes_are_honoured_as_the_merge_mode_they_equal(payload, mode):
    for key in ("hoodie.datasource.write.payload.class", "hoodie.compaction.payload.class"):
        assert merge_mode(HoodieConfig.of({key: payload}), "ts") == mode


@pytest.mark.parametrize("options, mode", [
    ({"hoodie.datasource.write.payload.type": "OVERWRITE_LATEST_AVRO"}, COMMIT_TIME_ORDERING),
    ({"hoodie.compaction.payload.type": "HOODIE_AVRO_DEFAULT"}, EVENT_TIME_ORDERING),
    ({"hoodie.compaction.payload.class": "com.uber.hoodie.common.model.OverwriteWithLatestAvroPayload"},
     COMMIT_TIME_ORDERING),  # incubator-era tables
])
def test_payload_types_and_incubator_class_names_are_honoured_too(options, mode):
    assert merge_mode(HoodieConfig.of(options), "ts") == mode


def test_the_merge_mode_key_wins_over_the_payload_class_and_the_default_follows_the_ordering_field():
    config = HoodieConfig.of({"hoodie.compaction.payload.class":
                              "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
                              "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"})
    assert merge_mode(config, "ts") == COMMIT_TIME_ORDERING
    assert merge_mode(HoodieConfig.of({}), "ts") == EVENT_TIME_ORDERING
    assert merge_mode(HoodieConfig.of({}), None) == COMMIT_TIME_ORDERING


@pytest.mark.parametrize("key, value, says", [
    ("hoodie.datasource.write.payload.class", "org.apache.hudi.common.model.PartialUpdateAvroPayload",
     "keeps stored values"),
    ("hoodie.compaction.payload.class", "com.acme.MyPayload", "does not know"),
    ("hoodie.datasource.write.payload.type", "PARTIAL_UPDATE_AVRO", "PartialUpdateAvroPayload keeps"),
    ("hoodie.record.merge.mode", "CUSTOM", "CUSTOM merge mode"),
    ("hoodie.record.merge.strategy.id", "11111111-2222-3333-4444-555555555555", "strategy of your own"),
    ("hoodie.datasource.write.record.merger.impls", "org.apache.hudi.HoodieSparkRecordMerger",
     "not supported"),
])
def test_values_that_would_change_results_are_refused_naming_them(key, value, says):
    option = next(k for k in (WriteConfig.PAYLOAD_CLASS, WriteConfig.PAYLOAD_TYPE, WriteConfig.RECORD_MERGE_MODE,
                              WriteConfig.MERGE_STRATEGY_ID, WriteConfig.MERGER_IMPLS) if key in k.names())
    with pytest.raises(InvalidConfigError) as e:
        HoodieConfig.of({key: value}).get(option)
    assert value in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("key, value", [
    ("hoodie.record.merge.strategy.id", "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"),
    ("hoodie.compaction.record.merger.strategy", "00000000-0000-0000-0000-000000000000"),
    ("hoodie.datasource.write.record.merger.impls", "org.apache.hudi.common.model.HoodieAvroRecordMerger"),
])
def test_hudis_built_in_merge_strategies_are_accepted(key, value):
    option = WriteConfig.MERGE_STRATEGY_ID if "strateg" in key else WriteConfig.MERGER_IMPLS
    assert HoodieConfig.of({key: value}).get(option) == value


def test_docs_options_md_is_the_registry_list():
    text = (REPO / "docs" / "options.md").read_text()
    assert text == options_markdown(), "regenerate: python -m hoodpy.config.registry > docs/options.md"
    for key in ("hoodie.metadata.enable", "hoodie.datasource.write.payload.class", "hoodie.cleaner.policy",
                "hoodie.table.initial.version"):
        assert f"`{key}`" in text


def test_every_scope_class_of_the_config_package_is_documented():
    """A class of ConfigKeys added to hoodpy/config must be listed in SCOPES, or docs/options.md misses it."""
    import importlib
    import pkgutil

    import hoodpy.config as config_pkg
    from hoodpy.config import ConfigKey
    from hoodpy.config.registry import SCOPES

    scopes = set()
    for info in pkgutil.iter_modules(config_pkg.__path__):
        module = importlib.import_module(f"hoodpy.config.{info.name}")
        for obj in vars(module).values():
            if (isinstance(obj, type) and obj.__module__ == module.__name__
                    and any(isinstance(v, ConfigKey) for v in vars(obj).values())):
                scopes.add(obj)
    assert scopes - set(SCOPES) == set()


@pytest.mark.parametrize("key", ["hoodie.table.precombine.field", "hoodie.table.ordering.fields",
                                 "hoodie.datasource.write.precombine.field"])
def test_several_ordering_fields_read_as_a_normalised_list(key):
    assert HoodieConfig.of({key: " ts, seq "}).get(TableConfig.PRECOMBINE_FIELD) == "ts,seq"
    assert HoodieConfig.of({key: "ts"}).get(TableConfig.PRECOMBINE_FIELD) == "ts"
    assert ordering_fields(HoodieConfig.of({key: "ts, seq"}).get(TableConfig.PRECOMBINE_FIELD)) == ("ts", "seq")
    assert ordering_fields(None) == ordering_fields("") == ()


def test_several_sql_precombine_fields():
    assert HoodieConfig.of({"preCombineField": "a, b"}).get(TableOptions.PRECOMBINE_FIELD) == "a,b"
