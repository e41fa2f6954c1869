import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError, InvalidRecordError, MissingConfigError
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
    # no record key: Hudi generates keys, which only _hoodie_record_key keeps (so virtual keys need fields)
    assert keygen(**{"hoodie.table.name": "t"}).auto_keys
    with pytest.raises(MissingConfigError, match="recordkey"):
        keygen(**{"hoodie.table.name": "t", "hoodie.populate.meta.fields": "false"})
    with pytest.raises(InvalidConfigError, match="keygenerator.class"):
        keygen(**{"hoodie.table.recordkey.fields": "id",
                  "hoodie.table.keygenerator.class": "com.example.MyKeyGenerator"})
    with pytest.raises(InvalidConfigError, match="takes no partition fields"):
        keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "c",
                  "hoodie.table.keygenerator.class": NONPARTITIONED_KEY_GENERATOR})


# -- time-based and custom key generators --------------------------------------------------------------------
import pyarrow as pa  # noqa: E402

from hoodpy.keygen import (  # noqa: E402
    CUSTOM,
    SIMPLE,
    TIMESTAMP,
    TIMESTAMP_KEY_GENERATOR,
    escape_path_name,
    unescape_path_name,
)
from hoodpy.keygen import joda  # noqa: E402

TS = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "ts",
      "hoodie.table.keygenerator.class": TIMESTAMP_KEY_GENERATOR}


def paths(kg, column):
    return kg.partition_paths_of(pa.table({"id": list(range(len(column))), "ts": column})).to_pylist()


def test_numeric_timestamp_types_and_null_default():
    secs = keygen(**TS, **{"hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
                           "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd HH:mm:ss.SSS"})
    # A null reads as 1 (one second after the epoch), as Hudi's getDefaultPartitionVal.
    assert paths(secs, pa.array([1705311000, None], pa.int64())) == ["2024-01-15 09:30:00.000",
                                                                     "1970-01-01 00:00:01.000"]
    millis = keygen(**TS, **{"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                             "hoodie.keygen.timebased.output.dateformat": "yyyyMMddHHmmssSSS",
                             "hoodie.keygen.timebased.output.timezone": "Asia/Kolkata"})
    assert paths(millis, pa.array([1705311000123, None])) == ["20240115150000123", "19700101053000001"]
    scalar = keygen(**TS, **{"hoodie.keygen.timebased.timestamp.type": "SCALAR",
                             "hoodie.keygen.timebased.timestamp.scalar.time.unit": "days",
                             "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"})
    assert paths(scalar, pa.array([19737.0, 1.9], pa.float64())) == ["2024/01/15", "1970/01/02"]


def test_joda_patterns_print_as_joda():
    ms = pa.array([1705311000123], pa.int64())  # 2024-01-15 09:30:00.123 UTC, a Monday
    cases = {"yyyy/MM/dd": "2024/01/15", "yy-M-d": "24-1-15", "MMM MMMM": "Jan January",
             "EEE EEEE": "Mon Monday", "hh:mm a": "09:30 AM", "D": "15", "SS": "12",
             "yyyy-MM-dd'T'HH:mm:ss.SSSZ": "2024-01-15T09:30:00.123+0000", "ZZ": "+00:00",
             "'it''s' yyyy": "it's 2024"}
    for pattern, expected in cases.items():
        assert joda.format_millis(pattern, ms, "UTC").to_pylist() == [expected], pattern
    assert joda.format_millis("HH:mm Z", ms, "America/Los_Angeles").to_pylist() == ["01:30 -0800"]
    assert joda.zone_id("PST") == "America/Los_Angeles"
    assert joda.zone_id("GMT+5:30") == "+05:30"
    with pytest.raises(ValueError, match="not supported"):
        joda.tokens("yyyy-ww")
    with pytest.raises(ValueError, match="unknown time zone"):
        joda.zone_id("Mars/Olympus")


def test_date_strings_parse_with_format_list_and_offsets():
    kg = keygen(**TS, **{"hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
                         "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ssZ;yyyyMMdd",
                         "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex": ";",
                         "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH"})
    # No output zone: each value prints in the offset it carried; no offset: UTC.
    assert paths(kg, ["2024-01-15T23:30:00+05:30", "20240116", "2024-01-15T23:30:00Z", None]) == [
        "2024/01/15/23", "2024/01/16/00", "2024/01/15/23", "1970/01/01/00"]
    out_zone = keygen(**TS, **{"hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
                               "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm",
                               "hoodie.keygen.timebased.timezone": "Asia/Tokyo",
                               "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd HH"})
    assert paths(out_zone, ["2024-01-15 08:00"]) == ["2024-01-15 08"]  # read and printed in Tokyo time
    with pytest.raises(InvalidRecordError, match="2024/01/15"):
        paths(kg, ["2024/01/15"])


def test_custom_key_generator_types_and_styles():
    kg = keygen(**{"hoodie.table.recordkey.fields": "id,name", "hoodie.table.partition.fields": "region,ts",
                   "hoodie.datasource.write.partitionpath.field": "region:simple,ts:TIMESTAMP",
                   "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomAvroKeyGenerator",
                   "hoodie.datasource.write.hive_style_partitioning": "true",
                   "hoodie.datasource.write.partitionpath.urlencode": "true",
                   "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                   "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd HH:mm"})
    assert kg.kind == CUSTOM and kg.partition_types == (SIMPLE, TIMESTAMP)
    rows = pa.table({"id": [1], "name": ["a"], "region": ["eu/west"], "ts": [1705311000000]})
    assert kg.partition_paths_of(rows).to_pylist() == ["region=eu%2Fwest/ts=2024-01-15 09%3A30"]
    assert kg.record_keys_of(rows).to_pylist() == ["id:1,name:a"]
    assert kg.partition_values("region=eu%2Fwest/ts=2024-01-15 09%3A30") == {"region": "eu/west"}
    # Hudi 1.x keeps the types in hoodie.table.partition.fields itself.
    v9 = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region:simple",
                   "hoodie.table.keygenerator.type": "CUSTOM"})
    assert v9.partition_fields == ("region",) and v9.record_key_of({"id": 3}) == "3"
    # Hudi 0.14 keeps only names in hoodie.properties: the table opens, a write needs the types.
    untyped = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region",
                        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator"})
    assert untyped.partition_types == (None,) and untyped.value_partition_fields == ()
    with pytest.raises(InvalidConfigError, match="field:TIMESTAMP"):
        untyped.partition_paths_of(pa.table({"id": [1], "region": ["eu"]}))
    with pytest.raises(InvalidConfigError, match="field:TIMESTAMP"):
        keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region:weird",
                  "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator"})


def test_key_generator_types_and_avro_class_names():
    for kind, klass in (("SIMPLE", "SimpleKeyGenerator"), ("NON_PARTITION_AVRO", "NonpartitionedAvroKeyGenerator"),
                        ("COMPLEX", "ComplexKeyGenerator")):
        kg = keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.keygenerator.type": kind,
                       **({"hoodie.table.partition.fields": "p"} if "NON" not in kind else {})})
        assert kg.key_generator_class == "org.apache.hudi.keygen." + klass
    assert keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "p",
                     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexAvroKeyGenerator"}
                  ).record_key_of({"id": 1}) == "id:1"
    with pytest.raises(InvalidConfigError, match="keygenerator.type"):
        keygen(**{"hoodie.table.recordkey.fields": "id", "hoodie.table.keygenerator.type": "FANCY"})
    # Hudi 0.14 keeps the timebased keys out of hoodie.properties: such a table opens; writing needs them.
    unset = keygen(**TS)
    with pytest.raises(InvalidConfigError, match="timestamp.type"):
        paths(unset, pa.array([1], pa.int64()))


def test_escape_path_name_is_hives():
    assert escape_path_name("a b/c:d=e%f#g") == "a b%2Fc%3Ad%3De%25f%23g"
    assert unescape_path_name("a b%2Fc%3Ad%3De%25f%23g") == "a b/c:d=e%f#g"
