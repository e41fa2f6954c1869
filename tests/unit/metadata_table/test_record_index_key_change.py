"""The keys a rewritten base file gained and lost against its file group's previous base file
(hoodpy.metadata_table.record_index.base_key_change): the merge's usual layout (stored rows in place, inserts
appended) and any other (deletes, reordered rows), equal to the set difference of the two files' keys."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.metadata_table.record_index import base_key_change
from hoodpy.storage import Storage

OLD = [f"k{i:03d}" for i in range(200)]


@pytest.mark.parametrize("new", [
    OLD,                                      # updates only
    OLD + ["n1", "n2"],                       # inserts appended
    OLD[:50] + OLD[51:] + ["n1"],             # a delete and an insert
    list(reversed(OLD)) + ["n1"],             # rows reordered
    ["n1", *OLD],                             # an insert first
    [],                                       # every key deleted
])
def test_key_change_is_the_set_difference(tmp_path, new):
    pq.write_table(pa.table({RECORD_KEY: pa.array(OLD, pa.string())}), tmp_path / "old.parquet",
                   row_group_size=64)
    pq.write_table(pa.table({RECORD_KEY: pa.array(new, pa.string())}), tmp_path / "new.parquet",
                   row_group_size=64)
    arrived, left = base_key_change(Storage(str(tmp_path)), "new.parquet", "old.parquet")
    assert sorted(arrived) == sorted(set(new) - set(OLD))
    assert sorted(left) == sorted(set(OLD) - set(new))


def test_a_new_file_group_brings_all_its_keys(tmp_path):
    pq.write_table(pa.table({RECORD_KEY: pa.array(OLD, pa.string())}), tmp_path / "new.parquet")
    assert base_key_change(Storage(str(tmp_path)), "new.parquet", None) == (OLD, [])
