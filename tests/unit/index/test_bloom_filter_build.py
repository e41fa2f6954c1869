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
