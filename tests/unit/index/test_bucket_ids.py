"""Bucket ids as Java Hudi 0.14 computes them (BucketIdentifier), pinned to values worked out by hand below
from the Java definitions, not taken from hoodpy:

* ``String.hashCode()``: h = 0; h = 31*h + c for each UTF-16 code unit c; 32-bit two's-complement overflow.
* ``List.hashCode()``: h = 1; h = 31*h + (e == null ? 0 : e.hashCode()).
* bucket = (List.hashCode(hashKeys) & Integer.MAX_VALUE) % numBuckets.
"""

from __future__ import annotations

import ctypes
import random
import re

import pyarrow as pa
import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import HoodieIOError, InvalidConfigError
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import BaseFileName
from hoodpy.index.bucket import (
    BucketSpec,
    bucket_file_groups,
    bucket_id,
    bucket_id_str,
    bucket_ids,
    bucket_of_file_id,
    hash_keys,
    java_list_hash,
    java_string_hash,
    new_bucket_file_id,
)

ID = ("id",)
ID_NAME = ("id", "name")


def spec(n: int, fields=ID) -> BucketSpec:
    return BucketSpec(n, tuple(fields))


# -- worked examples -----------------------------------------------------------------------------
def test_single_field_key_one():
    # "1".hashCode() = '1' = 49; List.hashCode = 31*1 + 49 = 80; 80 % 4 = 0, 80 % 256 = 80, 80 % 7 = 3.
    assert java_string_hash("1") == 49
    assert java_list_hash(["1"]) == 80
    assert [bucket_id("1", spec(n)) for n in (4, 256, 7)] == [0, 80, 3]


def test_composite_key_hashes_the_values_of_the_hash_fields():
    # "Alice": 65 -> 65*31+108=2123 -> 2123*31+105=65918 -> 65918*31+99=2043557 -> 2043557*31+101=63350368.
    assert java_string_hash("Alice") == 63350368
    # ["1","Alice"]: 31*(31*1+49) + 63350368 = 2480 + 63350368 = 63352848; % 4 = 0, % 256 = 16.
    assert hash_keys("id:1,name:Alice", ID_NAME) == ["1", "Alice"]
    assert java_list_hash(["1", "Alice"]) == 63352848
    assert bucket_id("id:1,name:Alice", spec(4, ID_NAME)) == 0
    assert bucket_id("id:1,name:Alice", spec(256, ID_NAME)) == 16
    # Hash field "name" only: ["Alice"] -> 31 + 63350368 = 63350399; % 4 = 3.
    assert hash_keys("id:1,name:Alice", ("name",)) == ["Alice"]
    assert bucket_id("id:1,name:Alice", spec(4, ("name",))) == 3


def test_hash_keys_follow_record_key_order_not_hash_field_order():
    # KeyGenUtils.extractRecordKeysByFields keeps the record key's order: "name,id" hashes ["1","Alice"] too.
    assert hash_keys("id:1,name:Alice", ("name", "id")) == ["1", "Alice"]
    assert bucket_id("id:1,name:Alice", spec(256, ("name", "id"))) == 16


def test_negative_hash_is_masked_not_negated():
    # "key-42".hashCode() overflows to -1134722869 (List hash of the one element list is the same value here):
    # -1134722869 & 0x7fffffff = 2^31 - 1134722869 = 1012760779; % 4 = 3, % 256 = 203.
    assert java_list_hash(["key-42"]) == -1134722869
    assert bucket_id("key-42", spec(4)) == 3
    assert bucket_id("key-42", spec(256)) == 203
    # A uuid key whose hash is negative: -1071100676 & 0x7fffffff = 1076382972; % 8 = 4, % 256 = 252.
    assert java_list_hash(["9909a8b1-2d15-4d3d-8ec9-efc48c536a00"]) == -1071100676
    assert bucket_id("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", spec(8)) == 4
    assert bucket_id("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", spec(256)) == 252


def test_non_ascii_keys_hash_utf16_code_units():
    # "é" = U+00E9 = 233: list hash 31 + 233 = 264; % 4 = 0, % 7 = 5.
    assert java_string_hash("é") == 233
    assert [bucket_id("é", spec(n)) for n in (4, 7)] == [0, 5]
    # "日本": U+65E5 = 26085, U+672C = 26412: 26085*31 + 26412 = 835047; list 31 + 835047 = 835078; % 256 = 6.
    assert java_string_hash("日本") == 835047
    assert bucket_id("日本", spec(256)) == 6
    # "😀" = U+1F600 is the surrogate pair D83D DE00: 55357*31 + 56832 = 1772899; list 1772930; % 256 = 130.
    assert java_string_hash("😀") == 1772899
    assert bucket_id("😀", spec(256)) == 130


def test_null_and_empty_placeholders_and_values_with_separators():
    # __null__ hashes as null (0) and __empty__ as "" (also 0): 31*(31*1 + 0) + 63350368 = 63351329.
    assert hash_keys("id:__null__,name:Alice", ID_NAME) == [None, "Alice"]
    assert hash_keys("id:__empty__,name:Alice", ID_NAME) == ["", "Alice"]
    assert java_list_hash([None, "Alice"]) == java_list_hash(["", "Alice"]) == 63351329
    # A value keeps everything after its field's first ':'; a part without ':' (a value's comma) is kept.
    assert hash_keys("id:a:b,name:x", ID_NAME) == ["a:b", "x"]
    assert hash_keys("id:a,b,name:x", ID_NAME) == ["a", "b", "x"]
    # A simple key is hashed whole unless it holds ':' (then Hudi reads it as a composite key).
    assert hash_keys("a,b", ID) == ["a,b"]
    assert hash_keys("10:30", ID) == []


def _java_string_hash_ctypes(text: str) -> int:
    """An independent String.hashCode: 32-bit C int arithmetic over the UTF-16 code units."""
    h = ctypes.c_int32(0)
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = ctypes.c_int32(h.value * 31 + int.from_bytes(data[i:i + 2], "little"))
    return h.value


def test_string_hash_matches_int32_arithmetic_on_random_keys():
    rng = random.Random(7)
    alphabet = "abcXYZ019-_:, éß日本😀𝄞"
    for _ in range(300):
        key = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert java_string_hash(key) == _java_string_hash_ctypes(key), key


def test_column_arithmetic_matches_the_reference_key_by_key():
    """bucket_ids (numpy over a whole column, what the executors run) == bucket_id (one key at a time)."""
    rng = random.Random(5)
    keys = ["1", "", "key-42", "id:1,name:Alice", "name:Alice,id:1", "id:__null__,name:Alice", "id:a:b,name:x",
            "id:a,b,name:x", "id:1,name:x,,", ",id:1", "10:30", ":", ",,,:", "id:\nx,name:y", "😀", "é" * 50, "x" * 3000]
    keys += ["".join(rng.choice("abc:,019-éß日😀𝄞") for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    for s in (spec(4), spec(256, ID_NAME), spec(7, ("name",))):
        assert bucket_ids(pa.array(keys), s).tolist() == [bucket_id(k, s) for k in keys]
    assert bucket_ids(pa.chunked_array([["1"], ["key-42"]]), spec(4)).tolist() == [0, 3]


# -- file ids ------------------------------------------------------------------------------------
def test_new_bucket_file_ids_start_with_the_8_digit_bucket():
    file_id = new_bucket_file_id(3)
    assert re.fullmatch(r"00000003-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-0", file_id)
    assert bucket_of_file_id(file_id) == 3
    assert bucket_id_str(255) == "00000255"
    assert bucket_of_file_id("334e26e9-8355-45cc-97c6-c31daf0df330-0") is None
    assert new_bucket_file_id(3) != file_id


def _bf(partition: str, file_id: str) -> BaseFile:
    return BaseFile(partition, BaseFileName(file_id, "1-0-1", "20250101000000000"), 1)


def test_bucket_file_groups_maps_partition_and_bucket_and_rejects_bad_layouts():
    a0, a3, b3 = new_bucket_file_id(0), new_bucket_file_id(3), new_bucket_file_id(3)
    assert bucket_file_groups([_bf("a", a0), _bf("a", a3), _bf("b", b3)], spec(4)) == {
        ("a", 0): a0, ("a", 3): a3, ("b", 3): b3}
    with pytest.raises(HoodieIOError, match="two file groups for bucket 3"):
        bucket_file_groups([_bf("a", a3), _bf("a", new_bucket_file_id(3))], spec(4))
    with pytest.raises(InvalidConfigError, match="belongs to none of the table's buckets 0..3"):
        bucket_file_groups([_bf("a", "334e26e9-8355-45cc-97c6-c31daf0df330-0")], spec(4))
    with pytest.raises(InvalidConfigError, match="belongs to none of the table's buckets 0..1"):
        bucket_file_groups([_bf("a", a3)], spec(2))


# -- config ----------------------------------------------------------------------------------------
def _config(options=None) -> HoodieConfig:
    return HoodieConfig.of({"hoodie.table.recordkey.fields": "id,name"}, options)


def test_spec_defaults_and_validation():
    assert BucketSpec.of(_config()) is None  # the default index is not BUCKET
    # Hudi's Spark default: 256 buckets (HoodieIndexConfig; Flink's default is 4), hash fields = record key.
    assert BucketSpec.of(_config({"hoodie.index.type": "bucket"})) == BucketSpec(256, ("id", "name"))
    assert BucketSpec.of(_config({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "8",
                                  "hoodie.bucket.index.hash.field": "name"})) == BucketSpec(8, ("name",))
    bad = [
        ({"hoodie.bucket.index.hash.field": "id,city"}, "city are not record key fields"),
        ({"hoodie.bucket.index.num.buckets": "0"}, "at least one bucket"),
        ({"hoodie.bucket.index.num.buckets": "-4"}, "at least one bucket"),
        ({"hoodie.index.bucket.engine": "CONSISTENT_HASHING"}, "CONSISTENT_HASHING bucket engine .* not supported"),
    ]
    for options, message in bad:
        with pytest.raises(InvalidConfigError, match=message):
            BucketSpec.of(_config({"hoodie.index.type": "BUCKET", **options}))


def test_the_bucket_index_needs_a_record_key():
    """A table with generated keys (no record key field) has nothing for the bucket index to hash."""
    with pytest.raises(InvalidConfigError, match="generated keys"):
        BucketSpec.of(HoodieConfig.of({"hoodie.index.type": "BUCKET", "hoodie.table.partition.fields": "city"}))
