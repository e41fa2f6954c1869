"""The driver lookup's last step (hoodpy.index.bloom._held): which candidate keys a file holds, in candidate
order, whichever side is hashed."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.index.bloom import _held

_KEYS = st.lists(st.integers(0, 80).map(lambda i: f"k{i}"), unique=True, max_size=40)


@settings(max_examples=200, deadline=None)
@given(candidates=_KEYS, stored=_KEYS)
def test_held_candidates_are_those_stored_in_candidate_order(candidates, stored):
    held = _held(pa.array(candidates, pa.string()), pa.array(stored, pa.string()))
    assert held.to_pylist() == [k for k in candidates if k in set(stored)]


@settings(max_examples=100, deadline=None)
@given(stored=st.lists(st.integers(0, 3000), unique=True, min_size=1, max_size=300),
       candidates=st.lists(st.integers(0, 3000), unique=True, max_size=60),
       row_group_size=st.integers(1, 120))
def test_row_groups_out_of_range_are_not_read_and_change_nothing(tmp_path_factory, stored, candidates,
                                                                   row_group_size):
    """A file's keys are read only from the row groups whose key statistics hold a candidate, and the candidates
    it holds are those a read of the whole key column finds. Keys are strings of numbers in numeric order, as a
    file of numeric keys written in input order has them: most row groups span narrow string ranges."""
    import pyarrow.parquet as pq

    from hoodpy.index.bloom import _row_groups_in_range, _stored_keys_for
    from hoodpy.meta_fields import RECORD_KEY

    path = tmp_path_factory.mktemp("rg") / "f.parquet"
    pq.write_table(pa.table({RECORD_KEY: pa.array([f"id:{i}" for i in sorted(stored)], pa.string())}), path,
                   row_group_size=row_group_size)
    sorted_candidates = pa.array(sorted(f"id:{i}" for i in candidates), pa.string())
    pf = pq.ParquetFile(path)
    groups = _row_groups_in_range(pf.metadata, sorted_candidates)
    for i in range(pf.metadata.num_row_groups):
        keys = set(pf.read_row_group(i, columns=[RECORD_KEY]).column(0).to_pylist())
        if keys & set(sorted_candidates.to_pylist()):
            assert i in groups
        stats = pf.metadata.row_group(i).column(0).statistics
        if i in groups:  # chosen only when a candidate lies inside its range
            assert any(stats.min <= c <= stats.max for c in sorted_candidates.to_pylist())
    held = _held(sorted_candidates, _stored_keys_for(pf, sorted_candidates, None))
    assert held.to_pylist() == [k for k in sorted_candidates.to_pylist() if k in {f"id:{i}" for i in stored}]


_IDS = st.lists(st.integers(0, 20000).map(lambda i: f"id:{i}"), unique=True, max_size=60)


@settings(max_examples=200, deadline=None)
@given(candidates=_IDS, stored=_IDS, cuts=st.lists(st.integers(0, 60), max_size=4))
def test_held_of_keys_of_many_lengths_in_row_group_chunks(candidates, stored, cuts):
    """Numeric ids as strings have several lengths (stored keys of a length no candidate has are dropped before
    hashing), and a file's keys come as one chunk per row group read."""
    bounds = sorted({0, len(stored), *(min(c, len(stored)) for c in cuts)})
    chunks = [pa.array(stored[a:b], pa.string()) for a, b in zip(bounds, bounds[1:])]
    chunked = pa.chunked_array(chunks, pa.string())
    held = _held(pa.array(sorted(candidates), pa.string()), chunked)
    assert held.to_pylist() == [k for k in sorted(candidates) if k in set(stored)]


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.text(max_size=6), max_size=50))
def test_sorted_unique_batch_keys(keys):
    """The batch keys the driver lookup searches: sorted as Python sorts strings (code points, as UTF-8 bytes
    sort), each once."""
    from hoodpy.index.bloom import sorted_unique

    assert sorted_unique(pa.array(keys, pa.string())).to_pylist() == sorted(set(keys))


def test_confirming_reuses_the_row_group_the_probe_read(tmp_path):
    """_sole_candidates' fallback: the row group _holds_one read (the one holding the most candidates) is not read
    again to confirm; the rest of the row groups in range are."""
    import pyarrow.parquet as pq

    from hoodpy.index.bloom import _holds_one, _stored_keys_for
    from hoodpy.meta_fields import RECORD_KEY

    path = tmp_path / "f.parquet"
    stored = [f"k{i:04d}" for i in range(0, 400, 2)]  # even keys, 50 per row group
    pq.write_table(pa.table({RECORD_KEY: pa.array(stored, pa.string())}), path, row_group_size=50)
    pf = pq.ParquetFile(path)
    # Odd keys (none stored): 30 in row group 1's range, 1 in row group 3's.
    candidates = pa.array(sorted([f"k{i:04d}" for i in range(101, 161, 2)] + ["k0351"]), pa.string())
    read: dict = {}
    assert not _holds_one(pf, candidates, read)
    assert list(read) == [1]
    assert read[1].to_pylist() == stored[50:100]
    read[1] = pa.array(["k0121"], pa.string())  # stands in for the row group: proves it is not read again
    keys = _stored_keys_for(pf, candidates, None, read=read)
    assert sorted(keys.to_pylist()) == sorted(["k0121", *stored[150:200]])
    assert _held(candidates, keys).to_pylist() == ["k0121"]
