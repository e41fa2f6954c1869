"""Key generator options given with one write (hoodie.datasource.write.keygenerator.*, record key and
partition fields, hoodie.keygen.timebased.*): honoured where they only complete the table's key generator,
refused naming the option where they would make other keys or partition paths, whatever name they use."""

import pyarrow as pa
import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.keygen import KeyGenerator, key_generator_for_write

SIMPLE = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region",
          "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"}
# A Hudi 0.14 time-based table: hoodie.properties names the class, not the format.
TIMESTAMP_014 = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "ts",
                 "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator"}
FORMAT = {"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
          "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"}


def _for_write(props, options):
    config = HoodieConfig.of(props)
    return key_generator_for_write(KeyGenerator.from_config(config), config, options)


@pytest.mark.parametrize("options", [
    None, {}, {"hoodie.datasource.write.recordkey.field": "id"},
    {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleAvroKeyGenerator"},
    {"hoodie.datasource.write.keygenerator.type": "SIMPLE", "hoodie.datasource.write.partitionpath.field": "region"},
    {"hoodie.datasource.write.hive_style_partitioning": "false"},
])
def test_options_that_agree_with_the_table_keep_its_key_generator(options):
    table = KeyGenerator.from_config(HoodieConfig.of(SIMPLE))
    assert _for_write(SIMPLE, options) is not None and _for_write(SIMPLE, options) == table


@pytest.mark.parametrize("options, named", [
    ({"hoodie.datasource.write.recordkey.field": "name"}, "hoodie.datasource.write.recordkey.field"),
    ({"hoodie.datasource.write.partitionpath.field": "city"}, "hoodie.datasource.write.partitionpath.field"),
    ({"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
      "hoodie.datasource.write.partitionpath.field": "region,id"}, "hoodie.datasource.write.partitionpath.field"),
    ({"hoodie.datasource.write.keygenerator.type": "NON_PARTITION",
      "hoodie.datasource.write.partitionpath.field": ""}, "hoodie.datasource.write.partitionpath.field"),
    ({"hoodie.datasource.write.hive_style_partitioning": "true"}, "hoodie.datasource.write.hive_style_partitioning"),
    ({"hoodie.datasource.write.partitionpath.urlencode": "true"}, "hoodie.datasource.write.partitionpath.urlencode"),
])
def test_options_that_would_make_other_keys_or_paths_are_refused_by_name(options, named):
    with pytest.raises(InvalidConfigError, match=f"Invalid value .* for {named}: the table has"):
        _for_write(SIMPLE, options)


def test_a_changed_time_format_is_refused():
    table = {**TIMESTAMP_014, **FORMAT}
    with pytest.raises(InvalidConfigError, match="hoodie.keygen.timebased.output.dateformat: the table has "
                                                 "'yyyy/MM/dd'"):
        _for_write(table, {"hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd"})


def test_time_based_options_complete_a_table_that_does_not_record_them():
    table = KeyGenerator.from_config(HoodieConfig.of(TIMESTAMP_014))
    assert table.timestamp is None  # it reads, but cannot make a partition path
    keygen = _for_write(TIMESTAMP_014, FORMAT)
    assert keygen.timestamp is not None
    rows = pa.table({"id": ["a"], "ts": pa.array([1705311000000], pa.int64())})
    assert keygen.partition_paths_of(rows).to_pylist() == ["2024/01/15"]
    # Given under their pre-0.14 names too.
    old = {k.replace("hoodie.keygen.", "hoodie.deltastreamer.keygen."): v for k, v in FORMAT.items()}
    assert _for_write(TIMESTAMP_014, old) == keygen


def test_custom_field_types_complete_a_custom_table():
    props = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region,ts",
             "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator", **FORMAT}
    keygen = _for_write(props, {"hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts:TIMESTAMP"})
    assert keygen.partition_types == ("SIMPLE", "TIMESTAMP")
    with pytest.raises(InvalidConfigError, match="partitionpath.field"):
        _for_write({**props, "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts:TIMESTAMP"},
                   {"hoodie.datasource.write.partitionpath.field": "region:SIMPLE,ts:SIMPLE"})


# A Hudi 1.x table records the key generator's type; a 0.14 one its class. An option for the other half of the
# pair is compared with the key generator the table has, named as given, never ignored because the table's
# recorded half would win.
V8_SIMPLE = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region",
             "hoodie.table.keygenerator.type": "SIMPLE"}


@pytest.mark.parametrize("props, options, named, says", [
    (SIMPLE, {"hoodie.datasource.write.keygenerator.type": "COMPLEX"}, "hoodie.datasource.write.keygenerator.type",
     "the table has no hoodie.table.keygenerator.type: its key generator is org.apache.hudi.keygen.SimpleKey"),
    (SIMPLE, {"hoodie.table.keygenerator.type": "COMPLEX"}, "hoodie.table.keygenerator.type", "SimpleKeyGenerator"),
    (V8_SIMPLE, {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
     "hoodie.datasource.write.keygenerator.class", "its key generator is org.apache.hudi.keygen.SimpleKeyGenerator"),
    (V8_SIMPLE, {"hoodie.datasource.write.keygenerator.type": "COMPLEX"}, "hoodie.datasource.write.keygenerator.type",
     "the table has 'SIMPLE'"),
    # Clashes with what the table records name the option too, not the table's property.
    (SIMPLE, {"hoodie.datasource.write.keygenerator.type": "NON_PARTITION"},
     "hoodie.datasource.write.keygenerator.type", "NonpartitionedKeyGenerator takes no partition fields"),
])
def test_the_type_and_class_pair_is_checked_against_the_tables_key_generator(props, options, named, says):
    with pytest.raises(InvalidConfigError, match=f"Invalid value .* for {named}: .*") as e:
        _for_write(props, options)
    assert says in str(e.value)


@pytest.mark.parametrize("props, options", [
    (SIMPLE, {"hoodie.datasource.write.keygenerator.type": "SIMPLE"}),
    (V8_SIMPLE, {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleAvroKeyGenerator"}),
])
def test_the_other_half_of_the_pair_agreeing_is_taken(props, options):
    assert _for_write(props, options).kind == "SIMPLE"
