"""The copy-on-write merge copies the old file's untouched row groups byte for byte (MergeContext.splice, the
default): the file has the rows, order, meta columns and footer of the full rewrite; the untouched groups'
column chunks are the old bytes (but for the file name column) and are never decoded; row-group offsets and
ordinals are right for readers that split files by row group. A footer round-trips through thrift_compact
unchanged, fields it does not know included. Files whose schema differs from the write's are rewritten."""

from __future__ import annotations

import glob
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiFileGroupReader

from hoodpy import arrow_rows
from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.file_group.naming import base_file_name, write_token
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write import base_file, merge, parquet_splice
from hoodpy.write import thrift_compact as tc
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, ExistingFile, MergeContext, merge_file_group
from java_samples import SAMPLES_DIR, unzip_sample
from parquet_chunks import chunk_bytes, group_bounds, spy_group_reads

OLD, NEW = "20250101000000000", "20250202000000000"
FILE_ID = "0b1c2d3e-0000-4000-8000-000000000000-0"
PARTITION = "p=1"
DATA = pa.schema([pa.field("v", pa.int64()), pa.field("ts", pa.int64()), pa.field("s", pa.string()),
                  pa.field("tags", pa.list_(pa.int64()))])
OPTIONS = BaseFileOptions(compression="zstd", bloom_num_entries=1000, block_size=1500)  # groups of ~20 rows


def _data(values: list[int], schema: pa.Schema = DATA) -> pa.Table:
    return pa.table({"v": pa.array(values, schema.field("v").type), "ts": pa.array([10] * len(values), pa.int64()),
                     "s": pa.array([f"s{v}" for v in values]),
                     "tags": pa.array([[v] if v % 3 else None for v in values], pa.list_(pa.int64()))})


def _old_file(tmp_path, n: int = 200, schema: pa.Schema = DATA, options: BaseFileOptions = OPTIONS) -> str:
    name = base_file_name(FILE_ID, write_token(0, 0, 0), OLD)
    rows = add_meta_columns(_data(list(range(n)), schema), pa.array([f"k{i:04d}" for i in range(n)]), PARTITION, OLD)
    rows = finalize(rows, pa.array([True] * n), instant_time=OLD, file_name=name, task_partition=0)
    write_base_file(Storage(str(tmp_path)), f"{PARTITION}/{name}", rows, options)
    return name


def _incoming(records: list[tuple[str, int, int]]) -> pa.Table:
    """(key, value, op) records as a merge task receives them."""
    table = _data([v for _, v, _ in records])
    table = table.add_column(0, RECORD_KEY, pa.array([k for k, _, _ in records], pa.string()))
    table = table.add_column(1, PARTITION_PATH, pa.array([PARTITION] * len(records), pa.string()))
    table = table.append_column(OP, pa.array([op for _, _, op in records], pa.int32()))
    return table.append_column(TARGET_FILE_ID, pa.array([FILE_ID] * len(records), pa.string()))


def _merge(tmp_path, name: str, records, *, splice: bool, stream: bool = True, threads: int = 2,
           keep: bool = False) -> tuple[dict, str]:
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA, options=OPTIONS,
                       existing={(PARTITION, FILE_ID): ExistingFile(f"{PARTITION}/{name}", OLD)},
                       stream=stream, threads=threads, splice=splice)
    arrow_rows._seq_counter.clear()  # every merge numbers its rows from 0
    incoming = records if isinstance(records, pa.Table) else _incoming(records)
    row = merge_file_group(ctx, incoming).to_pylist()[0]
    return row, str(tmp_path / row["path"])


@pytest.fixture
def group_reads(monkeypatch):
    """Indices of the row groups a merge decodes (SplitRead reads every group it merges with this)."""
    return spy_group_reads(monkeypatch)


def _spliced_equals_rewrite(tmp_path, records, group_reads, old_options: BaseFileOptions = OPTIONS,
                            ) -> tuple[str, str, pa.Table]:
    """Merge ``records`` spliced and as a full rewrite; assert the same rows and footer; returns the old file's
    path, the spliced file's (kept) and its rows."""
    name = _old_file(tmp_path, options=old_options)
    old = str(tmp_path / PARTITION / name)
    whole_stats, whole_path = _merge(tmp_path, name, records, splice=False, stream=False)
    whole, whole_meta = pq.read_table(whole_path), pq.ParquetFile(whole_path).metadata
    (tmp_path / whole_stats["path"]).unlink()
    group_reads.clear()
    stats, path = _merge(tmp_path, name, records, splice=True)
    decoded = list(group_reads)
    spliced = pq.read_table(path)
    assert spliced.equals(whole), "rows, order, meta columns"
    assert pq.ParquetFile(path).metadata.metadata == whole_meta.metadata, "footer: bloom filter, key range"
    assert pq.read_schema(path).remove_metadata() == whole.schema.remove_metadata()
    assert stats == {**whole_stats, "upsert_time_ms": stats["upsert_time_ms"], "file_size": stats["file_size"]}
    assert set(spliced.column(FILE_NAME).to_pylist()) == {stats["path"].rsplit("/", 1)[-1]}
    _assert_offsets_right(path, spliced)
    group_reads[:] = decoded  # those of the merge only
    return old, path, spliced


def _assert_offsets_right(path: str, rows: pa.Table) -> None:
    """Row groups read one by one give the file's rows; each group's file_offset is its first chunk's start and
    its ordinal its index (parquet-mr assigns a group to the split holding its midpoint from these)."""
    file = pq.ParquetFile(path)
    by_group = pa.concat_tables([file.read_row_group(i) for i in range(file.num_row_groups)])
    assert by_group.equals(rows)
    with pa.OSFile(path) as f:
        footer = parquet_splice.read_footer(f)
    end = 4
    for i, group in enumerate(footer.items(4)):
        starts = [parquet_splice._chunk_range(c)[0] for c in group.items(1)]
        assert group.get(5) == min(starts) == end and group.get(7) == i
        end = min(starts) + group.get(6)


@pytest.mark.parametrize("updated", [[3], [97, 99], [199]], ids=["first", "middle", "last"])
def test_one_updated_group_the_others_copied(tmp_path, group_reads, updated):
    records = [(f"k{i:04d}", 1000 + i, OP_UPSERT) for i in updated] + [("new", 7, OP_UPSERT)]
    old, path, rows = _spliced_equals_rewrite(tmp_path, records, group_reads)
    bounds = group_bounds(old)
    touched = {g for g, (lo, hi) in enumerate(bounds) if any(lo <= i < hi for i in updated)}
    assert len(bounds) >= 8 and len(touched) == 1
    assert sorted(group_reads) == sorted(touched), "only the touched group is decoded"
    new_bounds = group_bounds(path)
    if touched == {len(bounds) - 1}:  # the last group merged is encoded together with the insert
        assert new_bounds == bounds[:-1] + [(bounds[-1][0], 201)]
    else:
        assert new_bounds[:len(bounds)] == bounds and new_bounds[-1] == (200, 201)  # the insert: a group of its own
    for g in range(len(bounds)):
        if g in touched:
            continue
        old_chunks, new_chunks = chunk_bytes(old, g), chunk_bytes(path, g)
        assert old_chunks.pop(FILE_NAME) != new_chunks.pop(FILE_NAME)
        assert old_chunks == new_chunks, f"group {g} copied byte for byte"
    values = dict(zip(rows.column(RECORD_KEY).to_pylist(), rows.column("v").to_pylist(), strict=True))
    assert all(values[f"k{i:04d}"] == 1000 + i for i in updated)


def test_inserts_only_copy_every_group(tmp_path, group_reads):
    records = [(f"n{i:03d}", 5000 + i, OP_UPSERT) for i in range(30)]
    old, path, rows = _spliced_equals_rewrite(tmp_path, records, group_reads)
    assert group_reads == [], "no old row group decoded"
    assert rows.num_rows == 230 and rows.column(RECORD_KEY).to_pylist()[-30:] == [r[0] for r in records]
    for g in range(len(group_bounds(old))):
        old_chunks, new_chunks = chunk_bytes(old, g), chunk_bytes(path, g)
        del old_chunks[FILE_NAME], new_chunks[FILE_NAME]
        assert old_chunks == new_chunks


def test_a_small_last_group_is_encoded_again_with_the_inserts(tmp_path, group_reads):
    """Inserts join a small last group rather than add one more small group: a small file taking inserts
    commit after commit keeps one last group."""
    name = _old_file(tmp_path, n=203)  # groups of ~20 rows and a last one of a few
    old = str(tmp_path / PARTITION / name)
    bounds = group_bounds(old)
    assert bounds[-1][1] - bounds[-1][0] < bounds[0][1] - bounds[0][0]
    records = [(f"n{i:02d}", 5000 + i, OP_UPSERT) for i in range(2)]
    _, path = _merge(tmp_path, name, records, splice=True)
    new_bounds = group_bounds(path)
    assert new_bounds[:-1] == bounds[:-1], "the full groups are copied"
    assert new_bounds[-1] == (bounds[-1][0], bounds[-1][1] + 2), "the last group takes the inserts"
    assert group_reads == [len(bounds) - 1], "only the small last group is decoded"
    rows = pq.read_table(path)
    assert rows.num_rows == 205 and rows.column(RECORD_KEY).to_pylist()[-2:] == [r[0] for r in records]


def test_an_empty_group_of_the_old_file_is_dropped(tmp_path, group_reads):
    """A 0-row group in the old file (a writer may leave one) holds nothing to copy: the merge skips it."""
    name = _old_file(tmp_path)
    old = tmp_path / PARTITION / name
    rows = pq.read_table(old)
    with pq.ParquetWriter(old, rows.schema, compression="zstd") as writer:
        writer.write_table(rows.slice(0, 100), row_group_size=20)
        writer.write_table(rows.slice(0, 0))
        writer.write_table(rows.slice(100), row_group_size=20)
    assert 0 in [n for _, n in [(lo, hi - lo) for lo, hi in group_bounds(str(old))]]
    _, path = _merge(tmp_path, name, [("k0150", 7, OP_UPSERT), ("new", 8, OP_UPSERT)], splice=True)
    merged = pq.read_table(path)
    assert merged.num_rows == 201
    assert dict(zip(merged.column(RECORD_KEY).to_pylist(), merged.column("v").to_pylist()))["k0150"] == 7
    assert 0 not in [hi - lo for lo, hi in group_bounds(path)]


def test_deletes_emptying_a_group(tmp_path, group_reads):
    name = _old_file(tmp_path / "probe")
    lo, hi = group_bounds(str(tmp_path / "probe" / PARTITION / name))[2]
    records = [(f"k{i:04d}", 0, OP_DELETE) for i in range(lo, hi)] + [("k0150", 7, OP_UPSERT)]
    old, path, rows = _spliced_equals_rewrite(tmp_path, records, group_reads)
    assert rows.num_rows == 200 - (hi - lo)
    assert len(group_bounds(path)) == len(group_bounds(old)) - 1  # the emptied group is gone
    assert f"k{lo:04d}" not in rows.column(RECORD_KEY).to_pylist()


GZIP = BaseFileOptions(compression="gzip", bloom_num_entries=1000, block_size=1500)


def _copied(path: str, group: int) -> set[str]:
    """The columns of a row group whose chunk is gzip: copied from an old gzip file by a zstd merge."""
    meta = pq.ParquetFile(path).metadata.row_group(group)
    return {meta.column(j).path_in_schema for j in range(meta.num_columns) if meta.column(j).compression == "GZIP"}


def _ts_updates(keys: list[int], inserts: int = 0) -> pa.Table:
    """Updates of old rows ``keys`` that change their ``ts`` only (the other columns as the old file has them),
    and ``inserts`` new rows."""
    table = _incoming([(f"k{i:04d}", i, OP_UPSERT) for i in keys] + [(f"n{i:03d}", 9000 + i, OP_UPSERT)
                                                                     for i in range(inserts)])
    return table.set_column(table.schema.get_field_index("ts"), "ts",
                            pa.array([99] * len(keys) + [10] * inserts, pa.int64()))


@pytest.mark.parametrize("inserts", [0, 3])
def test_every_group_updated_copies_the_unchanged_columns(tmp_path, group_reads, inserts):
    """A uniform batch touches every row group but changes few columns: each group's unchanged chunks are copied,
    its changed column and the fresh rows' meta columns encoded; rows, footer and stats as the full rewrite."""
    updated = list(range(0, 200, 7))
    old, path, rows = _spliced_equals_rewrite(tmp_path, _ts_updates(updated, inserts), group_reads, GZIP)
    bounds = group_bounds(old)
    assert all(any(lo <= i < hi for i in updated) for lo, hi in bounds), "every group touched"
    assert sorted(group_reads) == list(range(len(bounds))), "every group decoded (its updates compared)"
    assert group_bounds(path)[:len(bounds)] == bounds, "each old group one new group"
    encoded = {"ts", COMMIT_TIME, COMMIT_SEQNO, FILE_NAME}
    for g in range(len(bounds)):
        old_chunks, new_chunks = chunk_bytes(old, g), chunk_bytes(path, g)
        # The old file is gzip, the merge writes zstd: a gzip chunk in the new file is a copied one.
        assert _copied(path, g) == set(old_chunks) - encoded, f"group {g}"
        assert all(old_chunks[c] == new_chunks[c] for c in _copied(path, g)), "copied byte for byte"
    ts = dict(zip(rows.column(RECORD_KEY).to_pylist(), rows.column("ts").to_pylist(), strict=True))
    assert [k for k, v in ts.items() if v == 99] == [f"k{i:04d}" for i in updated]
    assert rows.num_rows == 200 + inserts


def test_a_group_with_a_delete_or_a_changed_nested_column_is_encoded_whole(tmp_path, group_reads):
    name = _old_file(tmp_path / "probe")
    bounds = group_bounds(str(tmp_path / "probe" / PARTITION / name))
    updates = _ts_updates([b[0] for b in bounds])  # every group: ts changed
    deleted = bounds[1][0] + 1
    tags = updates.column("tags").to_pylist()
    tags[2] = [-1]  # group 2's update changes its list column too
    updates = updates.set_column(updates.schema.get_field_index("tags"), "tags",
                                 pa.array(tags, updates.schema.field("tags").type))
    records = pa.concat_tables([updates, _incoming([(f"k{deleted:04d}", 0, OP_DELETE)])])
    old, path, rows = _spliced_equals_rewrite(tmp_path, records, group_reads, GZIP)
    assert rows.num_rows == 199 and f"k{deleted:04d}" not in rows.column(RECORD_KEY).to_pylist()
    assert sorted(group_reads) == list(range(len(bounds)))
    for g in range(len(bounds)):
        copied = _copied(path, g)
        if g in (1, 2):
            assert copied == set(), f"group {g} encoded whole"
        else:
            assert copied == set(chunk_bytes(old, g)) - {"ts", COMMIT_TIME, COMMIT_SEQNO, FILE_NAME}, f"group {g}"


def test_same_values_compares_bits_and_nulls():
    same = merge._same_values
    f = pa.chunked_array
    assert same(f([[1.0, None]]), f([[1.0], [None]]))
    assert not same(f([[0.0]]), f([[-0.0]])), "-0.0 is another value to a copied chunk"
    assert same(f([[float("nan")]]), f([[float("nan")]]))
    assert not same(f([[1, None]]), f([[1, 2]])) and not same(f([[None]], pa.int64()), f([[0]]))
    assert same(f([], pa.string()), f([], pa.string()))
    assert not same(f([["a"]]), f([["b"]]))


def test_leaf_indices_count_nested_columns():
    schema = pa.schema([("a", pa.int64()), ("s", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))])),
                        ("m", pa.map_(pa.string(), pa.int64())), ("b", pa.string())])
    assert base_file._leaf_indices(schema) == {"a": 0, "s": 1, "m": 3, "b": 5}
    table = pa.table({"a": [1], "s": [{"x": 1, "y": ["z"]}], "m": [[("k", 1)]], "b": ["q"]}, schema=schema)
    assert pq.ParquetFile(pa.BufferReader(_encoded(table))).metadata.row_group(0).column(5).path_in_schema == "b"


def _encoded(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue()


def _assert_hudi_rs_reads(tmp_path, rel_path: str) -> None:
    (tmp_path / ".hoodie").mkdir(exist_ok=True)
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\nhoodie.timeline.layout.version=1\n"
        "hoodie.table.recordkey.fields=v\nhoodie.table.partition.fields=p\nhoodie.populate.meta.fields=true\n"
        "hoodie.table.base.file.format=PARQUET\nhoodie.datasource.write.hive_style_partitioning=true\n")
    path = str(tmp_path / rel_path)
    batch = HudiFileGroupReader(str(tmp_path)).read_file_slice_from_paths(rel_path, [])
    assert pa.Table.from_batches([batch]).select(pq.read_schema(path).names).equals(
        pq.read_table(path).combine_chunks())


def test_hudi_rs_reads_the_spliced_file(tmp_path):
    name = _old_file(tmp_path)
    stats, _ = _merge(tmp_path, name, [("k0030", 1030, OP_UPSERT), ("z", 9, OP_UPSERT)], splice=True)
    _assert_hudi_rs_reads(tmp_path, stats["path"])


def test_hudi_rs_reads_a_file_of_column_copied_groups(tmp_path):
    name = _old_file(tmp_path, options=GZIP)
    stats, path = _merge(tmp_path, name, _ts_updates(list(range(0, 200, 5)), 2), splice=True)
    assert _copied(path, 0), "chunks copied"
    _assert_hudi_rs_reads(tmp_path, stats["path"])


def test_a_file_of_another_schema_is_rewritten(tmp_path, group_reads, monkeypatch):
    # The old file's v is int32 (the table's column was widened since): its chunks cannot be copied.
    name = _old_file(tmp_path, schema=pa.schema([pa.field("v", pa.int32())]))
    copies = []
    monkeypatch.setattr(parquet_splice.SplicedParquetWriter, "copy", lambda *a, **k: copies.append(a))
    stats, path = _merge(tmp_path, name, [("k0030", 1030, OP_UPSERT), ("z", 9, OP_UPSERT)], splice=True)
    rows = pq.read_table(path)
    assert copies == [] and rows.schema.field("v").type == pa.int64() and rows.num_rows == 201
    assert len(group_reads) == len(group_bounds(str(tmp_path / PARTITION / name)))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failed_copy_fails_the_task_and_leaves_no_file(tmp_path, monkeypatch, threads):
    name = _old_file(tmp_path)
    calls = []
    original = base_file.SplicedBaseFile.put

    def failing(self, item):
        calls.append(item)
        if len(calls) == 3:
            raise OSError("disk full")
        original(self, item)

    monkeypatch.setattr(base_file.SplicedBaseFile, "put", failing)
    with pytest.raises(OSError, match="disk full"):
        _merge(tmp_path, name, [("k0030", 1030, OP_UPSERT), ("z", 9, OP_UPSERT)], splice=True, threads=threads)
    assert sorted(p.name for p in (tmp_path / PARTITION).iterdir()) == [name]


def test_copied_chunks_lose_page_indexes_and_bloom_offsets(tmp_path):
    # A source written with page indexes (as parquet-mr writes by default): the copied chunks' index offsets
    # would point into the old file.
    table = pa.table({"a": pa.array(range(300), pa.int64()), "b": pa.array([f"x{i % 7}" for i in range(300)])})
    src = str(tmp_path / "src.parquet")
    pq.write_table(table, src, row_group_size=100, write_page_index=True, store_schema=False)
    with pa.OSFile(src) as f:
        footer = parquet_splice.read_footer(f)
    assert footer.items(4)[0].items(1)[0].get(6) is not None, "the source has column indexes"
    template = parquet_splice.template_footer(table.schema, dict(store_schema=False))
    out = str(tmp_path / "out.parquet")
    extra = parquet_splice.EncodedFile.of(table.slice(0, 10), lambda _: dict(store_schema=False), 10)
    with pa.OSFile(src) as source, pa.OSFile(out, "wb") as sink:
        writer = parquet_splice.SplicedParquetWriter(sink, template)
        writer.copy(source, footer, 2)
        writer.append(extra)
        writer.copy(source, footer, 0)
        writer.close({b"k": b"v"})
    expected = pa.concat_tables([table.slice(200, 100), table.slice(0, 10), table.slice(0, 100)])
    assert pq.read_table(out).equals(expected)
    assert pq.ParquetFile(out).metadata.metadata == {b"k": b"v"}
    with pa.OSFile(out) as f:
        written = parquet_splice.read_footer(f)
    for group in written.items(4):
        for chunk in group.items(1):
            assert all(chunk.get(f) is None for f in (4, 5, 6, 7)) and chunk.get(3).get(14) is None
    _assert_offsets_right(out, expected)


def _footer_bytes(path: str) -> bytes:
    data = open(path, "rb").read()
    n = struct.unpack("<i", data[-8:-4])[0]
    return data[-8 - n:-8]


def test_a_footer_round_trips_byte_for_byte(tmp_path):
    path = str(tmp_path / "f.parquet")
    pq.write_table(pa.table({"a": [1, 2], "m": [{"x": 1.5}, None], "l": [[True], []]}), path, write_page_index=True)
    paths = [path]
    if (SAMPLES_DIR / "v6_nonpartitioned.zip").exists():  # a parquet-mr footer too
        base = unzip_sample("v6_nonpartitioned", tmp_path / "java")
        paths += sorted(glob.glob(str(base / "*.parquet")))[:1]
    for p in paths:
        footer = _footer_bytes(p)
        assert tc.encode(tc.decode(footer)) == footer, p


def test_fields_the_codec_does_not_know_are_kept():
    inner = tc.Struct({1: (tc.I32, -5), 40: (tc.BINARY, b"future")})
    value = tc.Struct({1: (tc.BOOL_TRUE, True), 2: (tc.DOUBLE, 0.25), 16: (tc.STRUCT, inner),
                       17: (tc.LIST, (tc.I64, [1, -(2 ** 40)])), 300: (tc.MAP, (tc.BINARY, tc.I8, [(b"a", -1)]))})
    assert tc.decode(tc.encode(value)) == value


@pytest.mark.parametrize("records", [
    [("k0030", 1030, OP_UPSERT), ("z", 9, OP_UPSERT)],  # a group merged whole, the last group with an insert
    _ts_updates(list(range(0, 200, 5)), 2),  # groups copied but for their changed columns
], ids=["merged groups", "changed columns"])
def test_columns_encoded_side_by_side_write_the_bytes_of_one_encoding(tmp_path, records):
    # threads=2 encodes a merged group's columns in two runs side by side (SplicedBaseFile's executor) and
    # a copied group's replaced columns each on their own; threads=1 encodes them in turn.
    name = _old_file(tmp_path)
    files = []
    for threads in (1, 2):
        stats, path = _merge(tmp_path, name, records, splice=True, threads=threads)
        files.append(open(path, "rb").read())
        (tmp_path / stats["path"]).unlink()
    assert files[0] == files[1]


def test_column_halves_split_by_bytes_in_order():
    rows = pa.table({"a": pa.array([1] * 100, pa.int64()), "b": pa.array(["x" * 50] * 100),
                     "c": pa.array([2] * 100, pa.int8())})
    halves = base_file._column_halves(rows)
    assert [h.column_names for h in halves] == [["a", "b"], ["c"]]
    assert [h.column_names for h in base_file._column_halves(rows.select(["a"]))] == [["a"]]


def test_encoded_parts_must_make_up_the_schema_in_order():
    table = pa.table({"a": pa.array([1, 2], pa.int64()), "b": pa.array(["x", "y"])})
    options = base_file._writer_options(OPTIONS, False)
    template = parquet_splice.template_footer(table.schema, options)
    parts = [parquet_splice.EncodedFile.of(table.select([c]), lambda _: options, 2) for c in ("a", "b")]
    sink = pa.BufferOutputStream()
    writer = parquet_splice.SplicedParquetWriter(sink, template)
    with pytest.raises(ValueError, match="parquet schema in order"):
        writer.append(parts[1], parts[0])
    writer.append(*parts)
    writer.close({})
    assert pq.read_table(pa.BufferReader(sink.getvalue())).equals(table)


@pytest.mark.parametrize("case", ["matching fails", "every row deleted"])
def test_the_spliced_writer_opened_during_matching_is_closed_when_unused(tmp_path, monkeypatch, case):
    # The spliced writer is set up (old file opened) while the keys are matched: a merge that fails there (and
    # leaves no file) or deletes every row (written as before, whole) closes it.
    name = _old_file(tmp_path)
    discarded = []
    original = base_file.SplicedBaseFile.discard
    monkeypatch.setattr(base_file.SplicedBaseFile, "discard", lambda self: (discarded.append(1), original(self)))
    if case == "matching fails":
        def failing(*_):
            raise MemoryError("no room")
        monkeypatch.setattr(merge, "matched_rows", failing)
        with pytest.raises(MemoryError, match="no room"):
            _merge(tmp_path, name, [("k0030", 1030, OP_UPSERT)], splice=True)
        assert sorted(p.name for p in (tmp_path / PARTITION).iterdir()) == [name]
    else:
        stats, _ = _merge(tmp_path, name, [(f"k{i:04d}", 0, OP_DELETE) for i in range(200)], splice=True)
        assert stats["num_writes"] == 0 and stats["num_deletes"] == 200
    assert discarded == [1]
