"""The copy-on-write merge of one file group (hoodpy.write.merge) and the sequence numbers it stamps, without
Spark."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.arrow_rows import add_meta_columns, claim_sequence_numbers, finalize
from hoodpy.file_group.naming import base_file_name, write_token
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import (
    OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, ExistingFile, MergeContext, key_range, matched_rows, merge_file_group,
)

OLD, NEW = "20250101000000000", "20250202000000000"
FILE_ID = "0b1c2d3e-0000-4000-8000-000000000000-0"
DATA = pa.schema([pa.field("v", pa.int64())])


@settings(max_examples=60, deadline=None)
@given(fresh=st.lists(st.booleans(), max_size=60))
def test_fresh_rows_get_the_sequence_number_of_their_position(fresh):
    n = len(fresh)
    rows = add_meta_columns(pa.table({"v": pa.array(range(n), pa.int64())}), pa.array([f"k{i}" for i in range(n)]),
                            "", OLD)
    rows = rows.set_column(rows.schema.get_field_index(COMMIT_SEQNO), COMMIT_SEQNO,
                           pa.array([f"{OLD}_7_{i}" for i in range(n)], pa.string()))
    first = claim_sequence_numbers(0)  # where the next claim starts
    mask = pa.chunked_array([fresh[: n // 2], fresh[n // 2:]], pa.bool_())  # as a table's column gives it
    out = finalize(rows, mask, instant_time=NEW, file_name="f.parquet", task_partition=3)
    # Row i, when fresh, is numbered first + i (its position in the file); kept rows keep theirs.
    assert out.column(COMMIT_SEQNO).to_pylist() == [
        f"{NEW}_3_{first + i}" if f else f"{OLD}_7_{i}" for i, f in enumerate(fresh)]
    assert out.column(FILE_NAME).to_pylist() == ["f.parquet"] * n
    assert claim_sequence_numbers(0) == first + n


def _stored_file(storage: Storage, keys: list[str]) -> str:
    name = base_file_name(FILE_ID, write_token(0, 0, 0), OLD)
    rows = add_meta_columns(pa.table({"v": pa.array(range(len(keys)), pa.int64())}), pa.array(keys), "", OLD)
    rows = finalize(rows, pa.array([True] * len(keys)), instant_time=OLD, file_name=name, task_partition=0)
    write_base_file(storage, name, rows, BaseFileOptions(compression="snappy", bloom_num_entries=100))
    return name


def _incoming(records: list[tuple[str, int, int]]) -> pa.Table:
    return pa.table({
        RECORD_KEY: pa.array([k for k, _, _ in records], pa.string()),
        PARTITION_PATH: pa.array([""] * len(records), pa.string()),
        "v": pa.array([v for _, v, _ in records], pa.int64()),
        TARGET_FILE_ID: pa.array([FILE_ID] * len(records), pa.string()),
        OP: pa.array([op for _, _, op in records], pa.int32()),
    })


def test_merge_replaces_in_place_drops_deletes_and_appends_new_keys(tmp_path):
    storage = Storage(str(tmp_path))
    old_name = _stored_file(storage, ["a", "b", "c", "d"])
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA,
                       existing={("", FILE_ID): ExistingFile(old_name, OLD)},
                       options=BaseFileOptions(compression="snappy", bloom_num_entries=100))
    # "c" arrives twice (a batch that was not combined): it replaces the stored row once and is not inserted.
    stats = merge_file_group(ctx, _incoming([("c", 30, OP_UPSERT), ("x", 90, OP_UPSERT), ("b", 0, OP_DELETE),
                                             ("c", 31, OP_UPSERT), ("y", 91, OP_UPSERT)]))
    row = stats.to_pylist()[0]
    assert (row["num_writes"], row["num_update_writes"], row["num_inserts"], row["num_deletes"]) == (5, 1, 2, 1)
    written = pq.read_table(str(tmp_path / row["path"]))
    assert written.column(RECORD_KEY).to_pylist() == ["a", "c", "d", "x", "y"]
    assert written.column("v").to_pylist() == [0, 30, 3, 90, 91]
    assert written.column(COMMIT_TIME).to_pylist() == [OLD, NEW, OLD, NEW, NEW]
    seqno = written.column(COMMIT_SEQNO).to_pylist()
    stored = pq.read_table(str(tmp_path / old_name)).column(COMMIT_SEQNO).to_pylist()
    assert seqno[0] == stored[0] and seqno[2] == stored[3]  # kept rows keep their numbers
    fresh = [int(s.rsplit("_", 1)[1]) for s in (seqno[1], seqno[3], seqno[4])]
    assert all(s.startswith(f"{NEW}_0_") for s in (seqno[1], seqno[3], seqno[4]))
    assert (fresh[1] - fresh[0], fresh[2] - fresh[1]) == (2, 1)  # numbered by their position in the file


NESTED = pa.schema([pa.field("v", pa.int64()), pa.field("s", pa.string()), pa.field("tags", pa.list_(pa.int64()))])


def _nested_rows(keys: list[str], values: list[int]) -> pa.Table:
    return pa.table({"v": pa.array(values, pa.int64()), "s": pa.array([f"s{v}" for v in values]),
                     "tags": pa.array([[v, v + 1] if v % 3 else None for v in values], pa.list_(pa.int64()))})


@settings(max_examples=40, deadline=None)
@given(n_old=st.integers(0, 40), ops=st.dictionaries(st.integers(0, 60), st.sampled_from([OP_UPSERT, OP_DELETE]),
                                                     max_size=30))
def test_merge_keeps_file_order_across_row_groups(tmp_path_factory, n_old, ops):
    """Rows of an old file written in several row groups (so read back in several batches, some untouched) keep
    their order and values; updated ones change in place, deletes go, new keys follow in batch order. Covers a
    list column (replaced by a gather, the mask kernel lacks it) next to flat ones."""
    tmp_path = tmp_path_factory.mktemp("merge")
    storage = Storage(str(tmp_path))
    options = BaseFileOptions(compression="snappy", bloom_num_entries=100, block_size=300)  # row groups of a few rows
    old_keys = [f"k{i:02d}" for i in range(n_old)]
    existing = {}
    if n_old:
        name = base_file_name(FILE_ID, write_token(0, 0, 0), OLD)
        rows = add_meta_columns(_nested_rows(old_keys, list(range(n_old))), pa.array(old_keys), "", OLD)
        write_base_file(storage, name, finalize(rows, pa.array([True] * n_old), instant_time=OLD, file_name=name,
                                                task_partition=0), options)
        assert pq.ParquetFile(str(tmp_path / name)).metadata.num_row_groups > 1 or n_old < 5
        existing = {("", FILE_ID): ExistingFile(name, OLD)}
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=NESTED, existing=existing,
                       options=options)
    batch = [(f"k{i:02d}", 1000 + i, op) for i, op in ops.items()]
    incoming = _nested_rows([k for k, _, _ in batch], [v for _, v, _ in batch])
    incoming = incoming.add_column(0, RECORD_KEY, pa.array([k for k, _, _ in batch], pa.string()))
    incoming = incoming.add_column(1, PARTITION_PATH, pa.array([""] * len(batch), pa.string()))
    incoming = incoming.append_column(OP, pa.array([op for _, _, op in batch], pa.int32()))
    incoming = incoming.append_column(TARGET_FILE_ID, pa.array([FILE_ID] * len(batch), pa.string()))
    if not incoming.num_rows or (not _any_upsert(batch) and not n_old):
        return  # a merge task always gets rows, and a new file group gets upserts
    row = merge_file_group(ctx, pa.Table.from_batches(incoming.to_batches(max_chunksize=4))).to_pylist()[0]

    expected = {k: i for i, k in enumerate(old_keys)}
    stored = set(old_keys)
    for k, v, op in batch:
        if op == OP_DELETE:
            expected.pop(k, None)
        elif k in stored:
            expected[k] = v
    order = [k for k in old_keys if k in expected] + [k for k, _, op in batch if op == OP_UPSERT and k not in stored]
    for k, v, op in batch:
        if op == OP_UPSERT and k not in stored:
            expected[k] = v
    written = pq.read_table(str(tmp_path / row["path"]))
    assert written.column(RECORD_KEY).to_pylist() == order
    want = _nested_rows(order, [expected[k] for k in order])
    assert written.select(["v", "s", "tags"]).to_pylist() == want.to_pylist()
    fresh = [k not in stored or expected[k] != old_keys.index(k) for k in order]
    assert written.column(COMMIT_TIME).to_pylist() == [NEW if f else OLD for f in fresh]
    assert written.column(FILE_NAME).to_pylist() == [row["path"]] * len(order)
    assert (row["num_writes"], row["num_inserts"]) == (len(order), sum(k not in stored for k in order))


def _any_upsert(batch: list[tuple[str, int, int]]) -> bool:
    return any(op == OP_UPSERT for _, _, op in batch)


@settings(max_examples=120, deadline=None)
@given(old=st.lists(st.integers(0, 400), max_size=300), new=st.lists(st.one_of(st.none(), st.integers(0, 400)),
                                                                      max_size=40),
       chunk=st.integers(1, 50))
def test_matched_rows_is_index_in_whether_or_not_the_key_range_prunes(old, new, chunk):
    # Few batch keys against many file keys: the key range prunes most file keys (the scatter path); many: not.
    old_keys = pa.chunked_array([pa.array([f"k{v:03d}" for v in old[i:i + chunk]], pa.string())
                                 for i in range(0, len(old), chunk)] or [pa.array([], pa.string())])
    new_keys = pa.array([None if v is None else f"k{v:03d}" for v in new], pa.string())
    got = matched_rows(old_keys, new_keys)
    assert got.type == pa.int32()
    assert got.to_pylist() == pc.index_in(old_keys, value_set=new_keys).to_pylist()


@settings(max_examples=150, deadline=None)
@given(kept=st.lists(st.text("abz\u00e9\U0001f600", min_size=1, max_size=3), max_size=30),
       inserted=st.lists(st.text("abz\u00e9\U0001f600", min_size=1, max_size=3), max_size=5),
       hint=st.one_of(st.none(), st.tuples(st.text("abz\u00e9", max_size=3), st.text("abz\u00e9", max_size=3))),
       true_hint=st.booleans())
def test_key_range_is_min_max_whatever_the_old_footer_states(kept, inserted, hint, true_hint):
    # The old footer's range is a hint: right (a file without deletes), stale (rows deleted) or another's.
    if true_hint and kept:
        hint = (min(kept, key=str.encode), max(kept, key=str.encode))
    keys = pa.chunked_array([pa.array(kept, pa.string()), pa.array(inserted, pa.string())])
    expected = None if not len(keys) else tuple(v.as_py() for v in pc.min_max(keys).values())
    assert key_range(keys, hint, pa.array(inserted, pa.string())) == expected


@settings(max_examples=60, deadline=None)
@given(old=st.lists(st.integers(0, 400), min_size=1, max_size=100), new=st.lists(st.integers(0, 400), max_size=40),
       hint=st.tuples(st.integers(0, 400), st.integers(0, 400)))
def test_matched_rows_with_a_footer_range_is_index_in(old, new, hint):
    # The footer's range decides only whether to prune; a wrong one (another writer's) changes no match.
    old_keys = pa.chunked_array([pa.array([f"k{v:03d}" for v in old], pa.string())])
    new_keys = pa.array([f"k{v:03d}" for v in new], pa.string())
    expected = pc.index_in(old_keys, value_set=new_keys).to_pylist()
    for low, high in ((min(old), max(old)), (min(hint), max(hint))):
        assert matched_rows(old_keys, new_keys, (f"k{low:03d}", f"k{high:03d}")).to_pylist() == expected
