"""dbt model config -> hoodie options (no Spark)."""

from __future__ import annotations

import pytest

from dbt.adapters.hoodpy.connections import sql_literal
from dbt.adapters.hoodpy.model_config import incremental_strategy, table_spec
from dbt.adapters.hoodpy.services import procedure_args
from hoodpy.errors import InvalidConfigError, MissingConfigError


def test_keyed_model_is_a_hoodpy_table_with_hudi_options():
    spec = table_spec("rides", {
        "unique_key": ["city", "ride_id"], "precombine_key": "ts", "partition_by": "city", "index_type": "simple",
        "hoodie_options": {"hoodie.parquet.small.file.limit": 0},
        "clustering": {"order": ["fare", "ts"], "strategy": "z-order", "inline": True, "max_commits": 4,
                       "target_file_max_bytes": 1024, "small_file_limit": 512},
        "clean": {"policy": "KEEP_LATEST_FILE_VERSIONS", "retained": 2},
    })
    assert spec.is_hoodpy and spec.record_key == ("city", "ride_id") and spec.partition_by == ("city",)
    assert spec.table_properties() == {
        "primaryKey": "city,ride_id", "type": "cow", "preCombineField": "ts",
        "hoodie.index.type": "SIMPLE", "hoodie.parquet.small.file.limit": "0",
        "hoodie.clustering.plan.strategy.sort.columns": "fare,ts", "hoodie.layout.optimize.strategy": "z-order",
        "hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "4",
        "hoodie.clustering.plan.strategy.target.file.max.bytes": "1024",
        "hoodie.clustering.plan.strategy.small.file.limit": "512",
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.clean.automatic": "true",
        "hoodie.cleaner.fileversions.retained": "2",
    }


def test_bucket_index_model_passes_its_layout_to_the_table():
    spec = table_spec("orders", {"unique_key": ["id", "line"], "index_type": "bucket",
                                 "hoodie_options": {"hoodie.bucket.index.num.buckets": 16,
                                                    "hoodie.bucket.index.hash.field": "id"}})
    assert spec.table_properties() == {
        "primaryKey": "id,line", "type": "cow", "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "16", "hoodie.bucket.index.hash.field": "id"}


def test_table_type_mor_is_a_merge_on_read_table():
    for value in ("mor", "MOR", "merge_on_read"):
        assert table_spec("m", {"unique_key": "id", "table_type": value}).table_properties() == {
            "primaryKey": "id", "type": "mor"}
    assert table_spec("m", {"unique_key": "id", "table_type": "cow"}).table_properties()["type"] == "cow"


def test_unkeyed_model_is_a_spark_table_and_appends():
    spec = table_spec("events", {})
    assert spec.file_format == "parquet" and not spec.is_hoodpy
    assert incremental_strategy(spec, None) == "append"
    assert incremental_strategy(table_spec("t", {"unique_key": "id"}), None) == "upsert"


@pytest.mark.parametrize(("config", "error", "key"), [
    ({"unique_key": "id", "clustering": {"order": ["id"], "strategy": "spiral"}}, InvalidConfigError,
     "clustering.strategy"),
    ({"unique_key": "id", "clustering": {"order": ["id"], "sort": "x"}}, InvalidConfigError, "clustering.sort"),
    ({"unique_key": "id", "clean": {"retain": 1}}, InvalidConfigError, "clean.retain"),
    ({"unique_key": "id", "clean": {"policy": "KEEP_ALL"}}, InvalidConfigError, "clean.policy"),
    ({"unique_key": "id", "hoodie_options": {"parquet.size": 1}}, InvalidConfigError, "hoodie_options.parquet.size"),
    ({"clustering": {"order": ["id"]}}, InvalidConfigError, "clustering"),
    ({"unique_key": "id", "index_type": "hash"}, InvalidConfigError, "index_type"),
    ({"unique_key": "id", "table_type": "orc"}, InvalidConfigError, "table_type"),
    ({"table_type": "mor"}, InvalidConfigError, "table_type"),
    ({"unique_key": "id", "index_type": "bucket", "hoodie_options": {"hoodie.bucket.index.hash.field": "city"}},
     InvalidConfigError, "hoodie.bucket.index.hash.field"),
    ({"unique_key": "id", "index_type": "bucket", "hoodie_options": {"hoodie.bucket.index.num.buckets": 0}},
     InvalidConfigError, "hoodie.bucket.index.num.buckets"),
    ({"unique_key": "id", "index_type": "bucket",
      "hoodie_options": {"hoodie.index.bucket.engine": "consistent_hashing"}}, InvalidConfigError,
     "hoodie.index.bucket.engine"),
])
def test_config_errors_name_the_model_and_the_key(config, error, key):
    with pytest.raises(error) as info:
        table_spec("my_model", config)
    assert info.value.key == key and "my_model" in str(info.value)


def test_check_columns_names_the_missing_sort_column():
    spec = table_spec("m", {"unique_key": "id", "clustering": {"order": ["nope"]}})
    with pytest.raises(InvalidConfigError) as info:
        spec.check_columns(["id", "fare"])
    assert info.value.key == "clustering.order" and "'nope'" in str(info.value)


def test_hoodpy_model_without_unique_key_has_generated_keys_and_appends():
    spec = table_spec("events", {"file_format": "hoodpy", "partition_by": "day", "precombine_key": "ts"})
    assert spec.is_hoodpy and spec.record_key == ()
    assert spec.table_properties() == {"preCombineField": "ts", "type": "cow"}  # no primaryKey: generated keys
    assert incremental_strategy(spec, None) == "append"
    assert incremental_strategy(spec, "insert_overwrite") == "insert_overwrite"
    for keyed in ("merge", "upsert", "delete+insert"):
        with pytest.raises(MissingConfigError) as info:
            incremental_strategy(spec, keyed)
        assert info.value.key == "unique_key" and f"incremental_strategy {keyed!r}" in str(info.value)
        assert "generated" in str(info.value) and "'events'" in str(info.value)


def test_keyed_strategies_need_a_unique_key():
    with pytest.raises(MissingConfigError) as info:
        incremental_strategy(table_spec("m", {}), "upsert")
    assert info.value.key == "unique_key" and "'m'" in str(info.value)
    with pytest.raises(MissingConfigError):
        incremental_strategy(table_spec("m", {}), "delete+insert")
    with pytest.raises(InvalidConfigError):
        incremental_strategy(table_spec("m", {}), "microbatch")
    with pytest.raises(InvalidConfigError):
        incremental_strategy(table_spec("m", {"unique_key": "id", "delete_column": "d"}), "append")


def test_service_call_arguments_come_from_config_and_overrides():
    spec = table_spec("m", {"unique_key": "id", "clustering": {"order": "a,b", "strategy": "hilbert"},
                            "clean": {"policy": "KEEP_LATEST_COMMITS", "retained": 3}})
    assert procedure_args(spec, "clustering", {}) == "order => 'a,b', order_strategy => 'hilbert'"
    assert procedure_args(spec, "clustering", {"order": ["c"], "strategy": "linear"}) == \
        "order => 'c', order_strategy => 'linear'"
    assert procedure_args(spec, "clean", {}) == "clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 3"
    assert procedure_args(spec, "clean", {"policy": "KEEP_LATEST_FILE_VERSIONS", "retained": 1}) == \
        "clean_policy => 'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1"


def test_bindings_are_spark_literals():
    import datetime as dt

    assert sql_literal(None) == "NULL"
    assert sql_literal(True) == "true"
    assert sql_literal(3) == "3"
    assert sql_literal("it's") == "'it\\'s'"
    assert sql_literal(dt.date(2024, 1, 2)) == "'2024-01-02'"
