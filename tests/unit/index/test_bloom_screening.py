"""How the driver lookup uses a file's bloom filter (hoodpy.index.bloom.rules_out): the filter's false-positive
rate from its bits, probing that stops at the first key that may be there, and no probing of a saturated filter
(Hudi's default filter of a file of millions of keys passes every key)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodpy.errors import InvalidRecordError
from hoodpy.index.bloom import rules_out
from hoodpy.index.bloom_filter import BloomFilter


def _filled(keys: list[str], num_entries: int = 1000, fpp: float = 1e-6, max_entries: int = 100000) -> BloomFilter:
    bloom = BloomFilter.create(num_entries, fpp, max_entries)
    bloom.add_all(pa.array(keys, pa.string()))
    return bloom


def test_false_positive_rate_follows_the_bits_set() -> None:
    assert BloomFilter.create(1000, 1e-6).false_positive_rate() == 0.0
    sized = _filled([f"k{i}" for i in range(1000)])  # as many keys as it was sized for
    assert 0 < sized.false_positive_rate() < 1e-5
    # Two rows of 100 keys' bits holding 5,000 keys (round robin past max_entries): nearly every bit is set.
    saturated = _filled([f"k{i}" for i in range(5000)], num_entries=100, fpp=1e-6, max_entries=200)
    assert saturated.num_rows == 2
    assert saturated.false_positive_rate() > 0.99
    # The rate survives serialization (the driver reads filters from footers).
    assert BloomFilter.deserialize(saturated.serialize()).false_positive_rate() == saturated.false_positive_rate()
    # And it predicts what probing finds: absent keys pass at about that rate.
    half = _filled([f"k{i}" for i in range(3000)], num_entries=1000, fpp=0.01, max_entries=1000)
    rate = half.false_positive_rate()
    absent = [f"x{i}" for i in range(20000)]
    observed = sum(half.might_contain_many(absent)) / len(absent)
    assert 0.02 < rate < 0.9 and abs(observed - rate) < 0.05


def test_might_contain_none_stops_at_the_first_key_that_may_be_there() -> None:
    bloom = _filled([f"k{i}" for i in range(1000)])
    absent = [f"x{i}" for i in range(5000)]
    assert bloom.might_contain_none(pa.array(absent, pa.string()))
    # A stored key far into the keys (past the first chunks) is found.
    assert not bloom.might_contain_none(pa.array(absent[:4000] + ["k7"] + absent[4000:], pa.string()))
    # Keys after the chunk holding one that may be there are never hashed: an empty key there raises nothing ...
    assert not bloom.might_contain_none(pa.array(["k1"] + absent[:100] + [""] * 2000, pa.string()), first_chunk=64)
    # ... while one in a chunk that is probed does.
    with pytest.raises(InvalidRecordError):
        bloom.might_contain_none(pa.array(absent[:10] + [""], pa.string()))


def test_rules_out_probes_only_a_filter_that_can_rule_the_file_out() -> None:
    sized = _filled([f"k{i}" for i in range(1000)])
    absent = pa.array([f"x{i}" for i in range(3000)], pa.string())
    assert rules_out(sized, absent)
    assert not rules_out(sized, pa.array(["x1", "k5", "x2"], pa.string()))
    saturated = _filled([f"k{i}" for i in range(5000)], num_entries=100, fpp=1e-6, max_entries=200)
    # Saturated: not probed at all (an empty key, which a probe rejects, passes unnoticed), never rules out.
    assert not rules_out(saturated, pa.array(["x1", ""], pa.string()))
    # A filter whose rate would pass one of this many candidates is not probed either ...
    loose = _filled([f"k{i}" for i in range(3000)], num_entries=1000, fpp=0.01, max_entries=1000)
    many = pa.array([f"x{i}" for i in range(int(2 / loose.false_positive_rate()))] + [""], pa.string())
    assert not rules_out(loose, many)
    # ... but is for a few candidates, which it may rule out.
    with pytest.raises(InvalidRecordError):
        rules_out(loose, pa.array([""], pa.string()))
