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
