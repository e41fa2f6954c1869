import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError, MissingConfigError
from hoodpy.keygen import (
    COMPLEX_KEY_GENERATOR,
    NONPARTITIONED_KEY_GENERATOR,
    SIMPLE_KEY_GENERATOR,
    KeyGenerator,
    infer_key_generator_class,
)


def keygen(**props):
    return KeyGenerator.from_config(HoodieConfig.of(props))


def test_inferred_classes_match_hudi():
    assert infer_key_generator_class(("id",), ()) == NONPARTITIONED_KEY_GENERATOR
    assert infer_key_generator_class(("id",), ("city",)) == SIMPLE_KEY_GENERATOR
    assert infer_key_generator_class(("id", "name"), ("city",)) == COMPLEX_KEY_GENERATOR
    assert infer_key_generator_class(("id",), ("a", "b")) == COMPLEX_KEY_GENERATOR


def test_record_keys_plain_and_composite():
    simple = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "city"})
    assert simple.record_key_of({"id": 7}) == "7"
    complex_ = keygen(**{"hoodie.table.recordkey.fields": "id,name",
                         "hoodie.table.partition.fields": "a,b"})
    assert complex_.record_key_of({"id": 1, "name": "x"}) == "id:1,name:x"
    assert complex_.record_key_of({"id": 1, "name": None}) == "id:1,name:__null__"
    assert complex_.record_key_of({"id": 1, "name": ""}) == "id:1,name:__empty__"
    # Hudi 0.14's ComplexKeyGenerator writes field:value even for a single key field.
    single_complex = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "a,b"})
    assert single_complex.record_key_of({"id": 3}) == "id:3"


def test_partition_paths_hive_style_and_default_partition():
    kg = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "y,m",
                   "hoodie.datasource.write.hive_style_partitioning": "true"})
    assert kg.partition_segment("y", "2024") == "y=2024"
    assert kg.partition_segment("m", None) == "m=__HIVE_DEFAULT_PARTITION__"
    assert kg.partition_values("y=2024/m=__HIVE_DEFAULT_PARTITION__") == {"y": "2024", "m": None}


def test_bad_key_generator_config_is_named():
    with pytest.raises(MissingConfigError, match="recordkey"):
        keygen(**{"hoodie.table.name": "t"})
    with pytest.raises(InvalidConfigError, match="keygenerator.class"):
        keygen(**{"hoodie.table.recordkey.fields": "id",
                  "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator"})
    with pytest.raises(InvalidConfigError, match="takes no partition fields"):
        keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "c",
                  "hoodie.table.keygenerator.class": NONPARTITIONED_KEY_GENERATOR})
