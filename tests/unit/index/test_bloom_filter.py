"""Hudi's DYNAMIC_V0 footer bloom filter and Hadoop's MurmurHash, checked against Java-written bytes.

Ground truth comes from three places:

* the parquet footers of the Java Hudi 0.14 sample tables (``HOODPY_HUDI_SAMPLES``, default
  ``/work/shared/hudi-samples``): rebuilding each file's filter from its keys must give the footer text;
* values computed with Hadoop's own ``MurmurHash`` / ``BloomFilter`` classes (hadoop-client-api 3.4.1, the jar
  pyspark ships) driven by Hudi's ``InternalDynamicBloomFilter`` row policy, for inputs the samples lack
  (non-ASCII tails, more than one row, the round-robin phase past ``max_entries``);
* properties: added keys are always found, the false-positive rate is near the configured one.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.errors import HoodieError, InvalidConfigError, InvalidRecordError
from hoodpy.index.bloom_filter import (
    serialized_sizes,
    BLOOM_TYPE_DYNAMIC_V0,
    FOOTER_BLOOM_FILTER_KEY,
    FOOTER_BLOOM_TYPE_KEY,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
    bit_size,
    num_hashes,
)
from hoodpy.index.murmur_hash import MurmurBatch, hash32

SAMPLES_DIR = Path(os.environ.get("HOODPY_HUDI_SAMPLES", "/work/shared/hudi-samples"))


def _sample_base_files() -> list[tuple[str, str]]:
    """(zip name, member) of every parquet base file in the samples; macOS resource forks excluded."""
    if not SAMPLES_DIR.is_dir():
        return []
    found = []
    for archive in sorted(SAMPLES_DIR.glob("*.zip")):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                name = member.rsplit("/", 1)[-1]
                if member.endswith(".parquet") and not member.startswith("__MACOSX/") and not name.startswith("._"):
                    found.append((archive.name, member))
    return found


SAMPLE_BASE_FILES = _sample_base_files()


@pytest.fixture(scope="module")
def samples_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample zips, unzipped once per module."""
    root = tmp_path_factory.mktemp("hudi-samples")
    for archive in sorted(SAMPLES_DIR.glob("*.zip")):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(root / archive.stem)
    return root


# -- Java-written footers -------------------------------------------------------------------------------


def test_samples_are_present() -> None:
    if not SAMPLES_DIR.is_dir():
        pytest.skip(f"no Hudi sample tables at {SAMPLES_DIR}")
    assert len(SAMPLE_BASE_FILES) >= 10


@pytest.mark.parametrize(
    ("archive", "member"), SAMPLE_BASE_FILES, ids=[m.rsplit("/", 1)[-1] for _, m in SAMPLE_BASE_FILES]
)
def test_filter_rebuilt_from_keys_equals_java_footer(samples_root: Path, archive: str, member: str) -> None:
    path = samples_root / Path(archive).stem / member
    footer = pq.read_metadata(path).metadata
    expected = footer[FOOTER_BLOOM_FILTER_KEY.encode()].decode("ascii")
    assert footer[FOOTER_BLOOM_TYPE_KEY.encode()].decode() == BLOOM_TYPE_DYNAMIC_V0
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    assert footer[FOOTER_MIN_RECORD_KEY.encode()].decode() == min(keys)
    assert footer[FOOTER_MAX_RECORD_KEY.encode()].decode() == max(keys)

    bloom = BloomFilter.create()
    bloom.add_all(keys)
    assert bloom.serialize() == expected

    read = BloomFilter.deserialize(expected)
    assert read.serialize() == expected
    sizing = (read.vector_size, read.num_hashes, read.entries_per_row, read.num_records)
    assert sizing == (2587966, 30, 60000, len(keys))
    assert all(read.might_contain(key) for key in keys)
    assert all(read.might_contain_many(keys))
    # pyarrow hands footer values over as bytes; those are accepted as they are.
    assert BloomFilter.deserialize(footer[FOOTER_BLOOM_FILTER_KEY.encode()]).serialize() == expected


# -- sizing ---------------------------------------------------------------------------------------------


def test_default_sizing_matches_hudi() -> None:
    bloom = BloomFilter.create()
    sizing = (bloom.vector_size, bloom.num_hashes, bloom.entries_per_row, bloom.max_entries)
    assert sizing == (2587966, 30, 60000, 100000)


def test_num_hashes_is_a_ceiling_not_a_rounding() -> None:
    # ln2 * 9586 / 1000 = 6.64: Hudi's getNumHashes takes the ceiling.
    assert bit_size(1000, 0.01) == 9586
    assert num_hashes(9586, 1000) == 7
    # ln2 * 48 / 10 = 3.33 -> 4 (rounding would say 3).
    assert (bit_size(10, 0.1), num_hashes(48, 10)) == (48, 4)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"num_entries": 0}, "hoodie.index.bloom.num_entries"),
        ({"num_entries": 1.5}, "hoodie.index.bloom.num_entries"),
        ({"fpp": 0.0}, "hoodie.index.bloom.fpp"),
        ({"fpp": 1.0}, "hoodie.index.bloom.fpp"),
        ({"fpp": 1e-300, "num_entries": 2**30}, "hoodie.index.bloom.fpp"),
        ({"max_entries": -1}, "hoodie.bloom.index.filter.dynamic.max.entries"),
    ],
)
def test_create_rejects_bad_settings(kwargs: dict, key: str) -> None:
    with pytest.raises(InvalidConfigError) as raised:
        BloomFilter.create(**kwargs)
    assert raised.value.key == key


# -- MurmurHash -----------------------------------------------------------------------------------------

# (input bytes as hex, seed, Hadoop MurmurHash.hash(bytes, length, seed)), computed with
# org.apache.hadoop.util.hash.MurmurHash from hadoop-client-api 3.4.1. Covers every tail length (0..3), tail
# bytes >= 0x80 (sign-extended in Java), negative and extreme seeds.
JAVA_MURMUR_VECTORS = [
    ("", 0, 0),
    ("", -1, -1285986640),
    ("", -2147483648, 643058856),
    ("31", 0, 1228156847),
    ("31", -1, 886594861),
    ("6162", 0, 1525573013),
    ("6162", -2147483648, 882555261),
    ("616263", 0, 1775488903),
    ("616263", -1, -1465591341),
    ("61626364", 0, 646393889),
    ("61626364", -2147483648, 3374409),
    ("6162636465", 0, 1594468574),
    ("6162636465", -1, -392878951),
    ("69643a312c6e616d653a416c696365", 0, 71696166),
    ("69643a312c6e616d653a416c696365", -2147483648, -571454386),
    ("68656c6c6f20776f726c6421", -1, -142631123),
    ("c3a9", 0, -384040333),
    ("c3a974c3a9", -1, -560686741),
    ("c3bfc3bfc3bf", 0, -971267017),
    ("78c3a9", 0, 997706133),
    ("f09f9880", -1, -1030930139),
    ("636166c3a9c3a9", 0, 1334739982),
    ("80", 0, -39096812),
    ("80", -1, -493635967),
    ("ff80", 0, 1227749724),
    ("01fe80", -2147483648, 139813865),
    ("80818283ff", 0, -782268440),
    ("80818283ff", -1, 1449977991),
]


@pytest.mark.parametrize(("hex_data", "seed", "expected"), JAVA_MURMUR_VECTORS)
def test_hash32_matches_hadoop(hex_data: str, seed: int, expected: int) -> None:
    assert hash32(bytes.fromhex(hex_data), seed) == expected


def test_batch_hash_matches_hadoop() -> None:
    data = [bytes.fromhex(h) for h, _, _ in JAVA_MURMUR_VECTORS]
    seeds = np.array([s for _, s, _ in JAVA_MURMUR_VECTORS], dtype=np.int64)
    got = MurmurBatch(data).hash32(seeds)
    assert got.dtype == np.int32
    assert got.tolist() == [e for _, _, e in JAVA_MURMUR_VECTORS]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.binary(max_size=40), st.integers(-(2**31), 2**31 - 1)), min_size=1, max_size=30),
)
def test_batch_hash_equals_scalar_hash(items: list[tuple[bytes, int]]) -> None:
    batch = MurmurBatch([data for data, _ in items])
    seeds = np.array([seed for _, seed in items], dtype=np.int64)
    assert batch.hash32(seeds).tolist() == [hash32(data, seed) for data, seed in items]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30), st.integers(1, 40))
def test_chained_batch_hash_equals_scalar_chain(keys: list[bytes], count: int) -> None:
    """hash32_chain keeps keys in block-count order between rounds: the scalar chain decides."""
    expected = []
    for data in keys:
        h, chain = 0, []
        for _ in range(count):
            h = hash32(data, h)
            chain.append(h)
        expected.append(chain)
    got = MurmurBatch(keys).hash32_chain(count)
    assert got.dtype == np.int32 and got.shape == (count, len(keys))
    assert got.T.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=2, max_size=40), st.data())
def test_batch_from_arrow_slice_equals_scalar_hash(keys: list[bytes], data) -> None:
    """A batch read from a slice of an Arrow binary array (offsets not starting at 0, bytes before and after the
    slice in the data buffer: the block words are gathered from it) hashes as the scalar function does."""
    start = data.draw(st.integers(0, len(keys) - 1))
    stop = data.draw(st.integers(start + 1, len(keys)))
    chunk = pa.array(keys, pa.binary()).slice(start, stop - start)
    _, offsets_buf, data_buf = chunk.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int32)[chunk.offset:chunk.offset + len(chunk) + 1]
    flat = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    batch = MurmurBatch.from_offsets(offsets, flat)
    seed = data.draw(st.integers(-(2**31), 2**31 - 1))
    assert batch.hash32(seed).tolist() == [hash32(k, seed) for k in keys[start:stop]]
    assert batch.hash32_chain(3).T.tolist() == [[hash32(k, 0), hash32(k, hash32(k, 0)),
                                                   hash32(k, hash32(k, hash32(k, 0)))] for k in keys[start:stop]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=50),
       st.sampled_from([(60000, 1e-9), (10, 0.1), (3, 0.5), (1000, 1e-4)]))
def test_vectorised_positions_equal_scalar_positions(keys: list[str], sizing: tuple[int, float]) -> None:
    """Bit positions of a batch (uint32 remainder of the absolute hash) match the one-key Python path."""
    bloom = BloomFilter.create(*sizing)
    encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
    positions = bloom._positions(encoded)
    assert positions.shape == (bloom.num_hashes, len(keys))
    assert positions.T.tolist() == [bloom._positions_of(data) for data in encoded]


@pytest.mark.parametrize("sizing", [(10, 0.1), (60000, 1e-9), (1, 0.5), (3, 0.5)])
def test_position_of_extreme_hashes(sizing: tuple[int, float]) -> None:
    """abs(-2^31) overflows in int32; Java's Math.abs(h % size) never sees it, and neither may we. The batch path
    (a SIMD division by the vector size) agrees with Java's truncating remainder at the ends of the int range and
    around multiples of the vector size."""
    bloom = BloomFilter.create(*sizing)
    size = bloom.vector_size
    values = [-(2**31), -(2**31) + 1, 2**31 - 1, 2**31 - 2, -1, 0, 1, size - 1, size, size + 1, -size, -size - 1,
              (2**31 - 1) // size * size, -((2**31 - 1) // size * size), (2**31 - 1) // size * size - 1]
    hashed = np.array([values], dtype=np.int32)
    got = bloom._bit_positions(hashed.copy())
    assert got.ravel().tolist() == [abs(h % size if h >= 0 else -(abs(h) % size)) for h in values]


def test_hash32_stays_in_java_int_range() -> None:
    values = [hash32(bytes([i]) * (i % 9), i * 7919 - 2**31) for i in range(256)]
    assert all(-(2**31) <= v < 2**31 for v in values)


# -- larger filters, against Hadoop's BloomFilter ----------------------------------------------------------


def _java_key(i: int) -> str:
    """The key generator the Java harness used (same on both sides): mixed lengths, 2- and 4-byte UTF-8."""
    return f"k{i}" + "\u00e9" * (i % 4) + "x" * (i % 5) + ("\U0001F600" if i % 7 == 0 else "")


@pytest.mark.parametrize(
    ("num_entries", "fpp", "max_entries", "count", "rows", "num_records", "sha256"),
    [
        # two rows: 60000 keys, then 40000 in a second row
        (60000, 1e-9, 100000, 100000, 2, 40000, "bb158e8cbac8b94093c07cabb6f3b34a4d16ea0880d8f0abc8977fa5b79e5ec0"),
        # past the bound: 2 * 60000 >= 100000, so the last 30000 keys go round-robin over both rows
        (60000, 1e-9, 100000, 150000, 2, 90000, "cb623ba6961c552792bbc24ff9cdc7a8b5b7e76efde5910e5f41dd095a7b18e7"),
        (1000, 0.01, 2500, 4000, 3, 2000, "69bb99b41833b29c91133c5bcb17369f354f25ad6ff81f52113b83b5ac9ab027"),
        # max_entries below num_entries: never grows, round-robin over the single row
        (1000, 0.01, 500, 1500, 1, 1500, "8fa02a16ee7322966bb2b536006dbd0b7a9e46c1ad805171c5e800cd981e3905"),
        (60000, 1e-9, 100000, 0, 1, 0, "b3d5cc53dc8f85b4fe61f186deb2b03d94e5cc7f6bb65e98e4217b2d435ab1f7"),
    ],
)
def test_serialized_filter_matches_java_harness(
    num_entries: int, fpp: float, max_entries: int, count: int, rows: int, num_records: int, sha256: str
) -> None:
    keys = [_java_key(i) for i in range(count)]
    bloom = BloomFilter.create(num_entries, fpp, max_entries)
    bloom.add_all(keys)
    text = bloom.serialize()
    assert (bloom.num_rows, bloom.num_records) == (rows, num_records)
    assert hashlib.sha256(text.encode("ascii")).hexdigest() == sha256
    read = BloomFilter.deserialize(text)
    assert read.serialize() == text
    assert all(read.might_contain_many(keys))


def test_tiny_filter_matches_java_harness_exactly() -> None:
    bloom = BloomFilter.create(10, 0.1)
    for i in range(3):
        bloom.add(_java_key(i))
    assert bloom.serialize() == "/////wAAAAQBAAAAMAAAAAoAAAADAAAAAf////8AAAAEAQAAADAhBEAUSBQ="


# -- rows -----------------------------------------------------------------------------------------------


def _row_count_and_records(text: str) -> tuple[int, int]:
    """(rows, currentNbRecord) straight from the serialized header."""
    _, current, rows = struct.unpack_from(">iii", base64.b64decode(text), 13)
    return rows, current


def test_more_than_nr_keys_start_a_second_row_and_round_trip() -> None:
    bloom = BloomFilter.create(num_entries=2, fpp=0.01, max_entries=10)
    bloom.add_all(["a", "b"])
    assert _row_count_and_records(bloom.serialize()) == (1, 2)
    bloom.add("c")
    text = bloom.serialize()
    assert _row_count_and_records(text) == (2, 1)

    read = BloomFilter.deserialize(text)
    assert read.num_rows == 2
    assert read.serialize() == text
    assert read.might_contain_many(["a", "b", "c"]) == [True, True, True]
    # "c" lives in row 1 alone: its bits are exactly those of a one-key filter of the same size.
    alone = BloomFilter.create(num_entries=2, fpp=0.01)
    alone.add("c")
    row_bytes = (bloom.vector_size + 7) // 8
    second_row = base64.b64decode(text)[-row_bytes:]
    assert second_row == base64.b64decode(alone.serialize())[-row_bytes:]


def test_rows_stop_growing_at_max_entries_then_round_robin() -> None:
    bloom = BloomFilter.create(num_entries=2, fpp=0.01, max_entries=4)
    keys = [f"key-{i}" for i in range(9)]
    bloom.add_all(keys)
    assert (bloom.num_rows, bloom.num_records) == (2, 7)
    # Java's switch to round-robin hands row 0 two keys in a row (key-4, key-5).
    expected = [["key-0", "key-1", "key-4", "key-5", "key-7"], ["key-2", "key-3", "key-6", "key-8"]]
    assert _rows_of(bloom) == [_rows_of(_one_row_filter(row_keys))[0] for row_keys in expected]


def _one_row_filter(keys: list[str]) -> BloomFilter:
    """A filter of the same size holding ``keys`` in a single row (max_entries=0 never grows)."""
    bloom = BloomFilter.create(num_entries=2, fpp=0.01, max_entries=0)
    bloom.add_all(keys)
    assert bloom.num_rows == 1
    return bloom


def _rows_of(bloom: BloomFilter) -> list[bytes]:
    """Each row's bit bytes, cut out of the serialized form."""
    data = base64.b64decode(bloom.serialize())
    row_bytes = (bloom.vector_size + 7) // 8
    return [data[25 + i * (13 + row_bytes) + 13 : 25 + (i + 1) * (13 + row_bytes)] for i in range(bloom.num_rows)]


def test_deserialized_filter_forgets_the_bound_like_java() -> None:
    bloom = BloomFilter.create(num_entries=2, fpp=0.01, max_entries=10)
    bloom.add_all(["a", "b"])
    read = BloomFilter.deserialize(bloom.serialize())
    assert read.max_entries == 0
    # Java's readFields leaves maxNr at 0, so a full row switches to round-robin instead of growing.
    read.add("c")
    assert (read.num_rows, read.num_records) == (1, 3)
    assert read.might_contain_many(["a", "b", "c"]) == [True, True, True]


# -- properties -----------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=200))
def test_added_keys_are_always_found(keys: list[str]) -> None:
    bloom = BloomFilter.create(num_entries=50, fpp=0.01, max_entries=120)
    bloom.add_all(keys)
    assert all(bloom.might_contain(key) for key in keys)
    assert all(bloom.might_contain_many(keys))
    read = BloomFilter.deserialize(bloom.serialize())
    assert all(read.might_contain_many(keys))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=50), st.lists(st.text(min_size=1), max_size=50))
def test_single_and_batch_lookups_agree(added: list[str], probes: list[str]) -> None:
    bloom = BloomFilter.create(num_entries=20, fpp=0.2)
    bloom.add_all(added)
    probes = probes + added
    assert bloom.might_contain_many(probes) == [bloom.might_contain(p) for p in probes]


def test_false_positive_rate_stays_near_fpp() -> None:
    bloom = BloomFilter.create(num_entries=1000, fpp=0.01)
    bloom.add_all(f"member-{i}" for i in range(1000))
    probes = [f"outsider-{i}" for i in range(20000)]
    rate = sum(bloom.might_contain_many(probes)) / len(probes)
    assert 0.004 < rate < 0.02, rate


# -- keys -----------------------------------------------------------------------------------------------


def test_empty_key_is_rejected_like_hadoop() -> None:
    bloom = BloomFilter.create()
    with pytest.raises(InvalidRecordError):
        bloom.add("")
    with pytest.raises(InvalidRecordError):
        bloom.might_contain("")


def test_keys_are_hashed_as_java_utf8() -> None:
    bloom = BloomFilter.create(num_entries=100, fpp=0.01)
    # Java's String.getBytes(UTF_8) writes a lone surrogate as '?', and a surrogate pair as one character.
    bloom.add("a\ud800")
    bloom.add("\ud83d\ude00")
    assert bloom.might_contain("a?")
    assert bloom.might_contain("\U0001F600")


def test_add_and_add_all_give_the_same_filter() -> None:
    keys = [_java_key(i) for i in range(300)]
    one_by_one = BloomFilter.create(num_entries=100, fpp=0.01, max_entries=250)
    for key in keys:
        one_by_one.add(key)
    at_once = BloomFilter.create(num_entries=100, fpp=0.01, max_entries=250)
    at_once.add_all(keys)
    assert one_by_one.serialize() == at_once.serialize()


# -- corrupt footers ------------------------------------------------------------------------------------


def _valid_bytes() -> bytes:
    bloom = BloomFilter.create(num_entries=10, fpp=0.1)
    bloom.add("x")
    return base64.b64decode(bloom.serialize())


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not base64 at all!", "not base64"),
        ("", "shorter"),
        (_b64(b"\xff\xff\xff\xff"), "shorter"),
        (_b64(b"\x00\x00\x00\x05" + _valid_bytes()[4:]), "version"),
        (_b64(_valid_bytes()[:8] + b"\x00" + _valid_bytes()[9:]), "hash type"),
        (_b64(_valid_bytes()[:-1]), "bytes where"),
        (_b64(_valid_bytes() + b"\x00"), "bytes where"),
        (_b64(_valid_bytes()[:21] + struct.pack(">i", 0) + _valid_bytes()[25:]), "0 rows"),
        (_b64(_valid_bytes()[:21] + struct.pack(">i", 2**31 - 1) + _valid_bytes()[25:]), "bytes where"),
        (_b64(_valid_bytes()[:9] + struct.pack(">i", 0) + _valid_bytes()[13:]), "must be positive"),
        (_b64(_valid_bytes()[:29] + struct.pack(">i", 5) + _valid_bytes()[33:]), "row 0 header"),
        # a SIMPLE filter (one Hadoop BloomFilter, no dynamic wrapper) is not DYNAMIC_V0
        (_b64(base64.b64decode(BloomFilter.create(1000, 0.01).serialize())[25:]), "0 rows"),
        ("A" * 5000, "version"),
    ],
)
def test_garbage_is_a_clear_config_error(text: str, reason: str) -> None:
    with pytest.raises(InvalidConfigError) as raised:
        BloomFilter.deserialize(text)
    error = raised.value
    assert isinstance(error, HoodieError)
    assert error.key == FOOTER_BLOOM_FILTER_KEY
    assert reason in error.reason
    assert len(error.value) <= 27  # a short prefix, never the whole megabyte footer


def test_unpadded_base64_is_accepted_like_java() -> None:
    text = BloomFilter.create(10, 0.1).serialize()
    assert text.endswith("=")
    assert BloomFilter.deserialize(text.rstrip("=")).serialize() == text


# -- speed ----------------------------------------------------------------------------------------------


def test_100k_keys_add_serialize_deserialize_quickly() -> None:
    keys = [f"{i:08x}-4f2a-4b1c-9d3e-{i * 2654435761 % 2**48:012x}" for i in range(100_000)]
    start = time.perf_counter()
    bloom = BloomFilter.create()
    bloom.add_all(keys)
    text = bloom.serialize()
    read = BloomFilter.deserialize(text)
    assert all(read.might_contain_many(keys))
    # Generous bound: a per-bit or per-hash Python loop would take minutes.
    assert time.perf_counter() - start < 15


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), max_size=40), st.integers(0, 40),
       st.sampled_from([(1, 0.1, 0), (2, 0.1, 4), (3, 0.05, 10), (5, 0.2, 7), (4, 0.1, 100)]))
def test_resumed_filter_continues_exactly_like_a_fresh_one(keys: list[str], cut: int, sizing) -> None:
    """Old keys' filter, resumed and given the new keys, is byte for byte the filter of all keys from scratch,
    on either side of the growth bound and the round-robin switch."""
    cut = min(cut, len(keys))
    old = BloomFilter.create(*sizing)
    old.add_all(keys[:cut])
    resumed = BloomFilter.resume(old.serialize(), cut, *sizing)
    assert resumed is not None
    resumed.add_all(pa.array(keys[cut:], pa.string()))
    scratch = BloomFilter.create(*sizing)
    scratch.add_all(keys)
    assert resumed.serialize() == scratch.serialize()
    assert (resumed.num_rows, resumed.num_records) == (scratch.num_rows, scratch.num_records)


def test_resume_refuses_a_filter_of_another_count_or_sizing() -> None:
    bloom = BloomFilter.create(2, 0.1, 4)
    bloom.add_all(["a", "b", "c"])
    text = bloom.serialize()
    assert BloomFilter.resume(text, 3, 2, 0.1, 4) is not None
    assert BloomFilter.resume(text, 2, 2, 0.1, 4) is None  # other key count
    assert BloomFilter.resume(text, 4, 2, 0.1, 4) is None
    assert BloomFilter.resume(text, 3, 3, 0.1, 4) is None  # other sizing
    assert BloomFilter.resume("not base64!", 3, 2, 0.1, 4) is None


@pytest.mark.parametrize(("num_entries", "fpp", "max_entries"), [(60000, 1e-9, 100000), (100, 1e-9, 100000),
                                                                 (10, 0.01, 35), (5, 0.1, 0)])
def test_serialized_sizes_predict_the_footer_text_length(num_entries, fpp, max_entries) -> None:
    sizes = serialized_sizes(num_entries, fpp, max_entries)
    assert sizes[-1][0] is None and all(a[0] < b[0] for a, b in zip(sizes, sizes[1:-1]))
    for n in (1, num_entries, num_entries + 1, 3 * num_entries, 20 * num_entries + 3):
        bloom = BloomFilter.create(num_entries, fpp, max_entries)
        bloom.add_all([f"k{i}" for i in range(n)])
        expected = next(size for most, size in sizes if most is None or n <= most)
        assert len(bloom.serialize()) == expected, n
