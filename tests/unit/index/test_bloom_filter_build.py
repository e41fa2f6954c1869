"""The bloom filter's building side (hoodpy.index.bloom_filter, hoodpy.index.murmur_hash): keys added as Arrow
batches, hashed in the batch's own order, set the same bits as the scalar port of Hadoop's filter sets key by
key; the serialized footer text is byte for byte the scalar reference's, through row growth and round robin."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.index.murmur_hash import MurmurBatch, hash32


def _keys(n: int, seed: int = 3) -> list[str]:
    """Keys of every length from 1 to 40 bytes (every tail length), some non-ASCII, in random order."""
    rng = np.random.default_rng(seed)
    alphabet = list("abcdefghijklmnopqrstuvwxyz0123456789:,_") + ["é", "ß", "中", "\U0001f600"]
    out = []
    for i in range(n):
        length = int(rng.integers(1, 41))
        out.append(f"{i}:" + "".join(rng.choice(alphabet, size=length)))
    return out


def _scalar_reference(keys: list[str], num_entries: int, fpp: float, max_entries: int) -> str:
    """The filter built key by key with the pure-Python hash (Hadoop's HashFunction chain per key)."""
    bloom = BloomFilter.create(num_entries, fpp, max_entries)
    for key in keys:
        row = bloom._claim_row()
        for p in bloom._positions_of(key.encode("utf-8")):
            bloom._rows[row][p] = True
    return bloom.serialize()


@pytest.mark.parametrize(("num_entries", "max_entries", "batch"), [
    (50, 120, 37),   # rows grow to 3, then round robin; batches straddle every switch
    (200, 100, 1000),  # one row, then round robin at once
    (500, 10_000, 64),  # rows only grow
])
def test_arrow_batches_set_the_scalar_filters_bits(num_entries, max_entries, batch):
    keys = _keys(1500)
    want = _scalar_reference(keys, num_entries, 0.01, max_entries)
    bloom = BloomFilter.create(num_entries, 0.01, max_entries)
    array = pa.array(keys, pa.string())
    for start in range(0, len(keys), batch):
        bloom.add_all(array.slice(start, batch))
    assert bloom.serialize() == want
    # Python strings, buffered and hashed together, give the same filter.
    listed = BloomFilter.create(num_entries, 0.01, max_entries)
    listed.add_all(keys)
    assert listed.serialize() == want


def test_lineitem_shaped_keys_through_a_default_filter():
    """Composite keys as a bulk_insert of lineitem makes them, 150k of them: the default filter's two rows
    fill and the keys go round robin, as in every large base file."""
    keys = [f"l_orderkey:{o},l_linenumber:{n}" for o in range(1, 30_001) for n in range(1, 6)]
    want = BloomFilter.create()
    want.add_all(keys)  # buffered Python keys: the path checked against Java's footers
    got = BloomFilter.create()
    array = pa.array(keys, pa.string())
    for start in range(0, len(keys), 10_000):
        got.add_all(array.slice(start, 10_000))
    assert got.num_rows == 2 and got.serialize() == want.serialize()


def test_unordered_chain_is_the_chain_in_the_batchs_order():
    data = [k.encode("utf-8") for k in _keys(300, seed=5)]
    batch = MurmurBatch(data)
    ordered = batch.hash32_chain(4)
    unordered = batch.hash32_chain_unordered(4)
    assert sorted(batch.order.tolist()) == list(range(len(data)))
    assert (unordered == ordered[:, batch.order]).all()
    # And the values are Hadoop's chained hashes.
    for j in (0, 17, 299):
        h, chain = 0, []
        for _ in range(4):
            h = hash32(data[j], h)
            chain.append(h)
        assert ordered[:, j].tolist() == chain


def test_rounds_one_at_a_time_are_the_unordered_chain():
    """hash32_rounds reuses its buffers: each round, copied as it is yielded, is the chain's row."""
    batch = MurmurBatch([k.encode("utf-8") for k in _keys(300, seed=7)])
    rounds = [h.view(np.int32).copy() for h in batch.hash32_rounds(30)]
    assert (np.stack(rounds) == batch.hash32_chain_unordered(30)).all()


@pytest.mark.parametrize("batch", [7, 64, 1000])
def test_keys_bound_for_a_full_row_are_not_hashed_and_the_filter_is_unchanged(batch, monkeypatch):
    """A row with every bit set takes no more hashing: rows of 51 bits and 2 hashes fill after ~100 keys
    each, at different keys, so batches meet no full row, one full row, and both; the footer text stays the
    key-by-key reference's."""
    keys = _keys(1500, seed=11)
    want = _scalar_reference(keys, 20, 0.3, 40)
    bloom = BloomFilter.create(20, 0.3, 40)
    hashed = []
    set_batch_bits = bloom._set_batch_bits
    monkeypatch.setattr(bloom, "_set_batch_bits", lambda b, rows: (hashed.append(len(b)), set_batch_bits(b, rows)))
    array = pa.array(keys, pa.string())
    for start in range(0, len(keys), batch):
        bloom.add_all(array.slice(start, batch))
    assert bloom.serialize() == want
    assert bloom.num_rows == 2 and bloom._full_rows == {0, 1}
    assert sum(hashed) <= len(keys) - 500  # the keys of the batches after both rows were full: not hashed
    assert all(bloom.might_contain_many(keys))


def test_a_resumed_filter_with_full_rows_continues_like_a_fresh_one():
    keys = _keys(900, seed=12)
    whole = BloomFilter.create(20, 0.3, 40)
    whole.add_all(pa.array(keys, pa.string()))
    old = BloomFilter.create(20, 0.3, 40)
    old.add_all(pa.array(keys[:600], pa.string()))
    resumed = BloomFilter.resume(old.serialize(), 600, 20, 0.3, 40)
    resumed.add_all(pa.array(keys[600:], pa.string()))
    assert resumed.serialize() == whole.serialize() == _scalar_reference(keys, 20, 0.3, 40)


def test_round_robin_bits_of_a_deserialized_filter_land_in_its_rows():
    """A deserialized filter goes round robin at once (no bound): its rows are gathered into one matrix for the
    one-pass bit setting, and lookups see the bits set through it."""
    first, more = _keys(300, seed=13), _keys(200, seed=14)
    bloom = BloomFilter.create(100, 0.01, 200)
    bloom.add_all(first)
    loaded = BloomFilter.deserialize(bloom.serialize())
    loaded.add_all(pa.array(more, pa.string()))
    reference = BloomFilter.deserialize(bloom.serialize())
    for key in more:  # key by key, one row at a time
        row = reference._claim_row()
        for p in reference._positions_of(key.encode("utf-8")):
            reference._rows[row][p] = True
    assert loaded.serialize() == reference.serialize()
    assert all(loaded.might_contain_many(first + more))
