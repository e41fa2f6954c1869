"""A deltacommit's merge task gets a Spark partition holding whole file groups and splits it itself
(log_append.split_file_groups): every group exactly once, each with all and only its rows, in arrival order.
Rows that all go to one file group may come without its columns (log_append.each_file_group's ``target``)."""

from __future__ import annotations

import pyarrow as pa

from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.arrow_rows import repeated
from hoodpy.write.log_append import each_file_group, split_file_groups, write_partition
from hoodpy.write.merge import TARGET_FILE_ID


def _rows(triples) -> pa.Table:
    parts, fids, keys = zip(*triples)
    return pa.table({RECORD_KEY: list(keys), PARTITION_PATH: list(parts), TARGET_FILE_ID: list(fids)})


def _groups(table: pa.Table) -> list[tuple[str, str, list[str]]]:
    out = []
    for g in split_file_groups(table):
        assert len(set(g.column(PARTITION_PATH).to_pylist())) == 1
        assert len(set(g.column(TARGET_FILE_ID).to_pylist())) == 1
        out.append((g.column(PARTITION_PATH)[0].as_py(), g.column(TARGET_FILE_ID)[0].as_py(),
                    g.column(RECORD_KEY).to_pylist()))
    return sorted(out, key=lambda t: (t[0] is None, t[0] or "", t[1] or ""))


def test_one_group_passes_through_whole():
    table = _rows([("p", "f1", "k3"), ("p", "f1", "k1"), ("p", "f1", "k2")])
    [group] = list(split_file_groups(table))
    assert group.equals(table)


def test_interleaved_groups_are_split_keeping_arrival_order():
    table = _rows([("p1", "f1", "a"), ("p2", "f1", "b"), ("p1", "f2", "c"), ("p1", "f1", "d"),
                   ("p2", "f1", "e"), ("p1", "f2", "f"), ("p1", "f1", "g")])
    assert _groups(table) == [("p1", "f1", ["a", "d", "g"]), ("p1", "f2", ["c", "f"]), ("p2", "f1", ["b", "e"])]


def test_same_file_id_in_two_partitions_and_null_partition_are_distinct_groups():
    table = _rows([(None, "f1", "a"), ("", "f1", "b"), (None, "f1", "c"), ("", "f2", "d")])
    assert _groups(table) == [("", "f1", ["b"]), ("", "f2", ["d"]), (None, "f1", ["a", "c"])]
    assert sum(g.num_rows for g in split_file_groups(table)) == table.num_rows


def test_chunked_input_is_split_like_contiguous_input():
    table = pa.concat_tables([_rows([("p", "f2", "a"), ("p", "f1", "b")]), _rows([("p", "f2", "c")])])
    assert table.column(RECORD_KEY).num_chunks == 2
    assert _groups(table) == [("p", "f1", ["b"]), ("p", "f2", ["a", "c"])]


def test_an_empty_spark_partition_writes_nothing():
    # A partition of the shuffle that no file group hashed into reaches the task as no batches at all.
    assert list(write_partition(None, iter([]))) == []
    empty = pa.RecordBatch.from_pylist([], schema=_rows([("p", "f1", "a")]).schema)
    assert list(write_partition(None, iter([empty]))) == []


def _written(table: pa.Table, target=None) -> list[pa.Table]:
    seen = []

    def write(group: pa.Table) -> pa.Table:
        seen.append(group)
        return pa.table({"n": [group.num_rows]})
    stats = list(each_file_group(iter(table.to_batches(max_chunksize=2)), write, target))
    assert [b.column(0)[0].as_py() for b in stats] == [g.num_rows for g in seen]
    return seen


def test_rows_without_their_one_target_get_it_and_are_written_as_one_group():
    rows = pa.table({RECORD_KEY: ["k3", "k1", "k2", "k5", "k4"], "v": [3, 1, 2, 5, 4]})
    [group] = _written(rows, ("p=1", "f1"))
    assert group.column(RECORD_KEY).to_pylist() == ["k3", "k1", "k2", "k5", "k4"]  # arrival order
    assert group.column("v").to_pylist() == [3, 1, 2, 5, 4]
    assert group.column(PARTITION_PATH).to_pylist() == ["p=1"] * 5
    assert group.column(TARGET_FILE_ID).to_pylist() == ["f1"] * 5
    assert group.schema.field(PARTITION_PATH).type == pa.string()
    assert group.schema.field(TARGET_FILE_ID).type == pa.string()


def test_rows_with_their_targets_are_split_without_one_target():
    rows = _rows([("p", "f2", "a"), ("p", "f1", "b"), ("p", "f2", "c")])
    groups = _written(rows)
    assert sorted((g.column(TARGET_FILE_ID)[0].as_py(), g.column(RECORD_KEY).to_pylist()) for g in groups) == \
        [("f1", ["b"]), ("f2", ["a", "c"])]


def test_no_rows_for_one_target_write_nothing():
    empty = pa.table({RECORD_KEY: pa.array([], pa.string())})
    assert _written(empty, ("", "f1")) == []


def test_repeated_strings_equal_repeated_values_at_every_length():
    # Chunked as the rows are (a task's rows come as Spark's Arrow batches), empty and long chunks included.
    for value in ("", "f935ea45-b262-4f25-93f7-9f8aac5d675d-0", "p=é/ü"):
        for chunks in ([0], [1], [7], [10_000, 10_000, 3], [0, 65_536, 5], [131_072]):
            rows = pa.Table.from_batches([pa.record_batch([pa.array(range(n), pa.int64())], names=["i"])
                                          for n in chunks])
            n = sum(chunks)
            column = repeated(value, rows)
            column.validate(full=True)
            assert column.type == pa.string() and len(column) == n and column.null_count == 0
            assert column.equals(pa.chunked_array([pa.repeat(pa.scalar(value, pa.string()), n)]))
            assert [len(c) for c in column.chunks] == chunks
