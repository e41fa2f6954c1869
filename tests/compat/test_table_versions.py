"""hoodpy reads Hudi 1.x copy-on-write tables (table versions 8 and 9, timeline layout 2) as hudi-rs does.

The fixtures are the hudi-rs sample tables in ../shared/hudi-samples/hudi-rs/sample_table/cow/ (Hudi 1.0 and
1.1 wrote them). For each: the snapshot, time travel as of every commit's completion time and incremental
windows between completion times equal hudi-rs's. (hudi-rs compares ``as_of`` and window bounds with
instant times while hoodpy, like Hudi 1.x, uses completion times; these tables were written by one writer,
so instant ``i+1`` starts after instant ``i`` completes and a completion time selects the same commits in
both.) Tables without meta fields are compared on the columns hudi-rs returns.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import hudi_rs
from java_samples import SAMPLES_DIR, unzip_sample
from hoodpy.config.properties import parse_properties
from hoodpy.inspect.metadata_table import validate_files
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.record_index import RecordIndex
from hoodpy.metadata_table.record_index_writer import table_keys
from hoodpy.errors import (
    InvalidConfigError, TableVersionChangeError, UnsupportedServiceError, UnsupportedTableVersionError,
)
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import parse_instant_time
from hoodpy.timeline.timeline import Timeline
from sql_ext import disable, enable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

COW_DIR = "hudi-rs/sample_table/cow"
READABLE = [
    "v8_complexkeygen_hivestyle", "v8_nonpartitioned", "v8_simplekeygen_hivestyle_no_metafields",
    "v9_timebasedkeygen_nonhivestyle", "v9_txns_complex_meta", "v9_txns_complex_nometa",
    "v9_txns_nonpart_meta", "v9_txns_nonpart_nometa", "v9_txns_simple_meta", "v9_txns_simple_nometa",
    "v9_txns_simple_overwrite",
    # A numeric partition column: int64 in the first files, a string in the table schema and later files.
    "v9_timebasedkeygen_epochmillis", "v9_timebasedkeygen_unixtimestamp",
]


def unzip_v1x(name: str, dest: Path) -> str:
    zip_path = SAMPLES_DIR / COW_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(dest, [m for m in z.namelist() if not m.startswith("__MACOSX") and ".DS_Store" not in m])
    return str(dest / name)


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("v1x_samples")


@pytest.fixture(scope="module")
def hoodpy_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


@pytest.fixture(scope="module", params=READABLE)
def sample(request, samples_dir) -> str:
    return unzip_v1x(request.param, samples_dir)


def test_snapshot_matches_hudi_rs(spark, sample):
    theirs = hudi_rs.snapshot(sample)
    assert theirs, "the sample has rows"
    assert hudi_rs.df_rows_like(HoodieTable.for_path(spark, sample).read(), theirs) == theirs


def test_time_travel_and_incremental_match_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    commits = table.timeline.completed_commits()
    assert [i.timestamp for i in commits] == hudi_rs.completed_instants(sample)
    completions = [i.completion_time for i in commits]
    assert all(c is not None and c > i.timestamp for c, i in zip(completions, commits))
    text = _as_text(NUMERIC_PARTITION.get(Path(sample).name))
    for at in completions:
        theirs = hudi_rs.snapshot(sample, as_of=at)
        assert text(hudi_rs.df_rows_like(table.read(as_of=at), theirs)) == text(theirs), at
    for start, end in zip(completions, completions[1:]):
        theirs = hudi_rs.incremental(sample, start, end)
        assert text(hudi_rs.df_rows_like(table.read_incremental(start, end), theirs)) == text(theirs), (start, end)


# TimestampBasedKeyGenerator samples whose numeric partition column the table schema declares a string from
# the third commit on (the first files hold int64; hoodpy casts them as hudi-rs does). As of an earlier
# commit hoodpy reads with that commit's schema (the column is a long), hudi-rs with the latest (a string):
# time travel compares the column's text.
NUMERIC_PARTITION = {"v9_timebasedkeygen_epochmillis": "ts_millis", "v9_timebasedkeygen_unixtimestamp": "ts_epoch"}


def _as_text(column: str | None) -> Callable[[list[dict]], list[dict]]:
    def text(rows: list[dict]) -> list[dict]:
        return [{**r, column: None if r[column] is None else str(r[column])} for r in rows] if column else rows
    return text


def test_numeric_partition_column_reads_as_the_table_schema_says(hoodpy_spark, samples_dir):
    """The int64 files and the string files of one column read as one string column, as hudi-rs reads it:
    through the Python API and through SQL (its cached snapshot path)."""
    for name, column in NUMERIC_PARTITION.items():
        path = unzip_v1x(name, samples_dir)
        theirs = sorted(r[column] for r in hudi_rs.snapshot(path))
        df = HoodieTable.for_path(hoodpy_spark, path).read()
        assert dict(df.dtypes)[column] == "string"
        assert sorted(r[column] for r in df.select(column).collect()) == theirs
        assert theirs and all(v.isdigit() for v in theirs)
        hoodpy_spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
        try:
            assert sorted(r[0] for r in hoodpy_spark.sql(f"SELECT {column} FROM {name}").collect()) == theirs
        finally:
            hoodpy_spark.sql(f"DROP TABLE {name}")


# -- writes into a copy, through SQL ---------------------------------------------------------------------
@dataclass(frozen=True)
class WriteCase:
    name: str
    key: str  # the record key column the statements pick rows by (first key field)
    new_key: str  # SQL expression of the inserted row's key, from the copied row
    update_column: str  # an updated non-key column ...
    update_sql: str  # ... its new value as SQL (from the old row)
    update: Callable[[Any], Any]  # ... and in Python


WRITE_CASES = [
    WriteCase("v8_complexkeygen_hivestyle", "id", "id + 1000", "intField", "intField + 7", lambda v: v + 7),
    WriteCase("v8_nonpartitioned", "id", "id + 1000", "intField", "intField + 7", lambda v: v + 7),
    # These two carry a metadata table, which hudi-rs lists files with: hoodpy keeps its files partition in step.
    WriteCase("v9_txns_simple_meta", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    WriteCase("v9_txns_complex_nometa", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    WriteCase("v9_txns_simple_overwrite", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    # Virtual keys: keys computed from the key generator, no meta columns written.
    WriteCase("v8_simplekeygen_hivestyle_no_metafields", "id", "id + 1000", "intField", "intField + 7",
              lambda v: v + 7),
    WriteCase("v9_txns_complex_meta", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    WriteCase("v9_txns_simple_nometa", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    WriteCase("v9_txns_nonpart_meta", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    WriteCase("v9_txns_nonpart_nometa", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
    # TimestampBasedKeyGenerator (DATE_STRING), date folders (yyyy/MM/dd/HH) computed from txn_ts; Java left an
    # empty base file (no column_stats records, as Java folds none) and TXN-001 in two file groups.
    WriteCase("v9_timebasedkeygen_nonhivestyle", "txn_id", "concat(txn_id, '-new')", "txn_type", "'UPDATED'",
              lambda v: "UPDATED"),
]


def _sql_literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


def _data_rows(rows: list[dict[str, Any]], columns: list[str]) -> list[tuple]:
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


@pytest.mark.parametrize("case", WRITE_CASES, ids=lambda c: c.name)
def test_sql_insert_update_delete_keep_the_version(hoodpy_spark, samples_dir, tmp_path, case):
    spark = hoodpy_spark
    path = str(tmp_path / case.name)
    shutil.copytree(unzip_v1x(case.name, samples_dir), path)
    props_file = Path(path, ".hoodie", "hoodie.properties")
    version = parse_properties(props_file.read_text())["hoodie.table.version"]
    listed = parse_properties(props_file.read_text()).get("hoodie.table.metadata.partitions", "").split(",")
    has_mdt = "files" in listed
    kept = [p for p in ("column_stats", "files", "record_index") if p in listed]
    before = hudi_rs.snapshot(path)
    columns = [c for c in before[0] if c not in hudi_rs.META]
    old_instants = hudi_rs.completed_instants(path)
    counts = Counter(r[case.key] for r in before)
    keys = sorted(k for k, n in counts.items() if n == 1)  # a key Java wrote into two file groups is ambiguous
    copied, updated, deleted = keys[0], keys[1], keys[2]
    name = f"v1x_{case.name}"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    try:
        select = ", ".join(f"{case.new_key} AS {c}" if c == case.key else c for c in columns)
        spark.sql(f"INSERT INTO {name} SELECT {select} FROM {name} WHERE {case.key} = {_sql_literal(copied)}")
        spark.sql(f"UPDATE {name} SET {case.update_column} = {case.update_sql} "
                  f"WHERE {case.key} = {_sql_literal(updated)}")
        spark.sql(f"DELETE FROM {name} WHERE {case.key} = {_sql_literal(deleted)}")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")

    expected = []
    for r in before:
        r = {c: r[c] for c in columns}
        if r[case.key] == copied:
            new = dict(r)
            new[case.key] = r[case.key] + 1000 if isinstance(copied, int) else f"{r[case.key]}-new"
            expected.append(new)
        if r[case.key] == updated:
            r[case.update_column] = case.update(r[case.update_column])
        if r[case.key] != deleted:
            expected.append(r)
    ours = HoodieTable.for_path(hoodpy_spark, path).read()
    assert _data_rows(hudi_rs.df_rows(ours), columns) == _data_rows(expected, columns)
    # hudi-rs lists files through a metadata table: hoodpy kept its files partition (one deltacommit per new
    # instant, the listing equal to storage's), column_stats (each listed base file's footer statistics) and
    # record_index (each live key), and dropped the partitions it does not maintain.
    assert parse_properties(props_file.read_text()).get("hoodie.table.metadata.partitions", "") == ",".join(kept)
    assert Path(path, ".hoodie", "metadata").exists() == has_mdt
    if has_mdt:
        assert validate_files(Storage(path)).rows == []
        assert sorted(p.name for p in Path(path, ".hoodie", "metadata").iterdir()) == [".hoodie", *kept]
    if "column_stats" in kept:
        assert_column_stats_match_footers(path)
    if "record_index" in kept:  # each live key at its file group, the new and deleted keys included
        storage = Storage(path)
        found = RecordIndex(storage).read_all(Timeline.load(storage))
        live = table_keys(storage, Timeline.load(storage))
        assert {k: (v.partition_path, v.file_id) for k, v in found.items()} == {
            k: (v.partition_path, v.file_id) for k, v in live.items()}
    after = hudi_rs.snapshot(path)
    assert _data_rows(after, columns) == _data_rows(expected, columns)
    assert hudi_rs.df_rows_like(ours, after) == after

    # Three new instants in timeline layout 2, the table's version unchanged, history intact.
    props = parse_properties(props_file.read_text())
    assert props["hoodie.table.version"] == version and props["hoodie.timeline.layout.version"] == "2"
    instants = hudi_rs.completed_instants(path)
    assert instants[:len(old_instants)] == old_instants and len(instants) == len(old_instants) + 3
    timeline = Path(path, ".hoodie", "timeline")
    mdt_timeline = {f.name for f in Path(path, ".hoodie", "metadata", ".hoodie", "timeline").glob("*")}
    for t in instants[len(old_instants):]:
        assert not has_mdt or any(n.startswith(f"{t}_") and n.endswith(".deltacommit") for n in mdt_timeline)
        [completed] = [f for f in timeline.iterdir() if f.name.startswith(f"{t}_")]
        assert completed.read_bytes().startswith(b"Obj\x01")  # Avro commit metadata, as Hudi 1.x writes
        assert {f"{t}.commit.requested", f"{t}.inflight"} <= {f.name for f in timeline.iterdir()}
        assert not Path(path, ".hoodie", f"{t}.commit").exists()
    assert hudi_rs.snapshot(path, as_of=old_instants[-1]) == hudi_rs.snapshot(
        unzip_v1x(case.name, samples_dir), as_of=old_instants[-1])


def assert_column_stats_match_footers(path: str) -> None:
    """column_stats holds, for every base file the files partition lists, the statistics of its footer."""
    storage = Storage(path)
    timeline = Timeline.load(storage)
    index = cs.read_column_stats(storage, timeline)
    expected = {}
    for partition, names in MetadataTable(storage).read(timeline).all_files().items():
        for name in (n for n in names if cs.is_indexed_file(n)):
            meta = pq.read_metadata(str(Path(path, partition, name)))
            columns = cs.columns_to_index((f.name, cs.indexable(f.type)) for f in meta.schema.to_arrow_schema())
            for stats in cs.footer_stats(meta, name, columns, versioned=True):
                expected[cs.column_stats_key(stats["columnName"], partition, name)] = stats
    assert index == expected


# -- tables hoodpy creates at version 8 --------------------------------------------------------------------
def test_a_table_created_at_version_8_is_read_by_hudi_rs(hoodpy_spark, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "t8")
    spark.sql(f"""CREATE TABLE v8_created (id INT, name STRING, ts BIGINT, region STRING) USING hoodpy
                  PARTITIONED BY (region) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.write.table.version' = '8')""")
    try:
        spark.sql("INSERT INTO v8_created VALUES (1, 'a', 1, 'eu'), (2, 'b', 1, 'us'), (3, 'c', 1, 'us')")
        spark.sql("UPDATE v8_created SET name = 'bb', ts = 2 WHERE id = 2")
        spark.sql("DELETE FROM v8_created WHERE id = 3")
    finally:
        spark.sql("DROP TABLE IF EXISTS v8_created")
    props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
    assert {k: props.get(k) for k in ("hoodie.table.version", "hoodie.timeline.layout.version",
                                      "hoodie.table.initial.version", "hoodie.timeline.path",
                                      "hoodie.record.merge.mode", "hoodie.table.keygenerator.type")} == {
        "hoodie.table.version": "8", "hoodie.timeline.layout.version": "2", "hoodie.table.initial.version": "8",
        "hoodie.timeline.path": "timeline", "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.table.keygenerator.type": "SIMPLE"}
    rows = hudi_rs.snapshot(path)
    assert [(r["id"], r["name"], r["ts"], r["region"]) for r in rows] == [(1, "a", 1, "eu"), (2, "bb", 2, "us")]
    commits = hudi_rs.completed_instants(path)
    assert len(commits) == 3
    timeline = sorted(f.name for f in Path(path, ".hoodie", "timeline").iterdir() if f.is_file())
    assert len(timeline) == 9 and all(any(n.startswith(f"{t}") for n in timeline) for t in commits)
    assert not [f for f in Path(path, ".hoodie").iterdir() if f.name[:1].isdigit()]  # nothing in layout 1
    # hudi-rs time travel and incremental on the table hoodpy wrote agree with hoodpy's.
    table = HoodieTable.for_path(spark, path)
    completions = [i.completion_time for i in table.timeline.completed_commits()]
    for at in completions:
        assert hudi_rs.df_rows(table.read(as_of=at)) == hudi_rs.snapshot(path, as_of=at), at
    assert hudi_rs.df_rows(table.read_incremental(completions[0], completions[1])) == hudi_rs.incremental(
        path, completions[0], completions[1])


def test_an_unknown_write_table_version_is_refused_before_anything_is_written(hoodpy_spark, tmp_path):
    path = tmp_path / "t7"
    with pytest.raises(InvalidConfigError,
                       match="hoodie.write.table.version: hoodpy creates tables of version 6, 8 or 9"):
        hoodpy_spark.sql(f"""CREATE TABLE v7_created (id INT, ts BIGINT) USING hoodpy LOCATION '{path}'
                            TBLPROPERTIES (primaryKey = 'id', 'hoodie.write.table.version' = '7')""")
    assert not path.exists() or not any(path.iterdir())


# -- versions hoodpy reads only, and versions it does not know -----------------------------------------------
def _with_version(src: Path, dest: Path, version: str) -> str:
    shutil.copytree(src, dest)
    props = dest / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=6", f"hoodie.table.version={version}"))
    return str(dest)


def _tree(path: str) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}


def test_version_5_reads_and_refuses_writes(spark, samples_dir, tmp_path):
    # Hudi 0.12 / 0.13 (table version 5) wrote the timeline and commit metadata version 6 has.
    path = _with_version(unzip_sample("v6_nonpartitioned", samples_dir), tmp_path / "v5", "5")
    table = HoodieTable.for_path(spark, path)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(str(unzip_sample("v6_nonpartitioned", samples_dir)))
    before = _tree(path)
    with pytest.raises(UnsupportedServiceError, match="Writing is not supported on table version 5"):
        table.upsert(table.read().drop(*hudi_rs.META))
    assert _tree(path) == before


def test_a_version_above_9_is_refused_naming_it(spark, samples_dir, tmp_path):
    path = _with_version(unzip_sample("v6_nonpartitioned", samples_dir), tmp_path / "v10", "10")
    before = _tree(path)
    with pytest.raises(UnsupportedTableVersionError, match="table version 10 / timeline layout 1 \\(newer than"):
        HoodieTable.for_path(spark, path)
    assert _tree(path) == before


def test_an_unknown_key_generator_class_in_the_properties_is_refused_naming_it(spark, samples_dir, tmp_path):
    path = str(tmp_path / "unknown_keygen")
    shutil.copytree(unzip_sample("v6_nonpartitioned", samples_dir), path)
    props = Path(path, ".hoodie", "hoodie.properties")
    props.write_text(props.read_text().replace("org.apache.hudi.keygen.NonpartitionedKeyGenerator",
                                               "com.example.MyKeyGenerator"))
    assert "com.example.MyKeyGenerator" in props.read_text()
    before = _tree(path)
    with pytest.raises(InvalidConfigError, match="com.example.MyKeyGenerator"):
        table = HoodieTable.for_path(spark, path)
        table.upsert(table.read().drop(*hudi_rs.META))
    assert _tree(path) == before


# -- upgrade_table / downgrade_table -------------------------------------------------------------------------
def _instant_files(path: str, folder: str = ".hoodie") -> list[str]:
    return sorted(f.name for f in Path(path, folder).iterdir() if f.is_file() and f.name[:1].isdigit())


def test_upgrade_to_8_and_downgrade_to_6_keep_the_rows(hoodpy_spark, samples_dir, tmp_path):
    spark = hoodpy_spark
    path = str(tmp_path / "up")
    shutil.copytree(unzip_sample("v6_complexkeygen_hivestyle", samples_dir), path)  # Java 0.14, JSON metadata
    # The upgrade takes completion times from the files' modification times (as Hudi does); unzipping lost
    # them, so give each instant file the time it was written at: one second after its instant time.
    for f in Path(path, ".hoodie").iterdir():
        if f.name[:1].isdigit():
            written = parse_instant_time(f.name[:17]) + dt.timedelta(seconds=1)
            os.utime(f, (written.timestamp(), written.timestamp()))
    before = hudi_rs.snapshot(path)
    old = [i.timestamp for i in HoodieTable.for_path(spark, path).timeline.completed_commits()]
    as_of_first = hudi_rs.snapshot(path, as_of=old[0])
    spark.sql(f"CREATE TABLE upgraded USING hoodpy LOCATION '{path}'")
    try:
        assert spark.sql("CALL upgrade_table(table => 'upgraded', to_version => 'EIGHT')").collect() == [(True,)]
        props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
        assert (props["hoodie.table.version"], props["hoodie.timeline.layout.version"],
                props["hoodie.table.initial.version"], props["hoodie.table.keygenerator.type"]) == (
            "8", "2", "SIX", "COMPLEX")
        assert _instant_files(path) == []
        moved = _instant_files(path, ".hoodie/timeline")
        completed = [n for n in moved if "_" in n.split(".")[0]]
        assert [n.split("_")[0] for n in completed] == old
        assert all(Path(path, ".hoodie/timeline", n).read_bytes().startswith(b"Obj\x01") for n in completed)
        assert hudi_rs.snapshot(path) == before
        table = HoodieTable.for_path(spark, path)
        first = table.timeline.completed_commits()[0]
        assert first.completion_time == f"{int(first.timestamp[:14]) + 1}{first.timestamp[14:]}"
        assert hudi_rs.df_rows(table.read(as_of=first.completion_time)) == as_of_first
        spark.sql("UPDATE upgraded SET intField = intField + 1 WHERE id = 1")
        after_update = hudi_rs.snapshot(path)
        assert len(hudi_rs.completed_instants(path)) == len(old) + 1

        assert spark.sql("CALL downgrade_table(table => 'upgraded', to_version => 'SIX')").collect() == [(True,)]
        props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
        assert (props["hoodie.table.version"], props["hoodie.timeline.layout.version"]) == ("6", "1")
        assert not {"hoodie.table.initial.version", "hoodie.record.merge.mode",
                    "hoodie.table.keygenerator.type"} & set(props)
        assert not Path(path, ".hoodie", "timeline").exists()
        commits = [n for n in _instant_files(path) if n.endswith(".commit")]
        assert len(commits) == len(old) + 1 and all(json.loads(Path(path, ".hoodie", n).read_text()) for n in commits)
        assert hudi_rs.snapshot(path) == after_update
        assert hudi_rs.df_rows(HoodieTable.for_path(spark, path).read()) == after_update
    finally:
        spark.sql("DROP TABLE IF EXISTS upgraded")


def test_upgrade_refuses_what_it_cannot_convert(hoodpy_spark, samples_dir, tmp_path):
    spark = hoodpy_spark
    path = str(tmp_path / "refused")
    shutil.copytree(unzip_sample("v6_nonpartitioned", samples_dir), path)
    Path(path, ".hoodie", "29990101000000000.clean.requested").write_bytes(b"")  # a pending table service
    before = _tree(path)
    with pytest.raises(TableVersionChangeError, match="between table versions 6 \\(SIX\\) and 8 \\(EIGHT\\) only"):
        spark.sql(f"CALL upgrade_table(path => '{path}', to_version => 'NINE')")
    with pytest.raises(TableVersionChangeError, match="has pending instants .*29990101000000000__clean"):
        spark.sql(f"CALL upgrade_table(path => '{path}', to_version => 'EIGHT')")
    assert _tree(path) == before


def test_the_empty_version_8_table_reads_empty_and_takes_a_first_insert(hoodpy_spark, samples_dir, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "v8_empty")
    shutil.copytree(unzip_v1x("v8_empty", samples_dir), path)
    df = HoodieTable.for_path(spark, path).read()
    assert df.columns == [*hudi_rs.META, "id", "name", "isActive"] and df.count() == 0
    spark.sql(f"CREATE TABLE v8_empty USING hoodpy LOCATION '{path}'")
    try:
        spark.sql("INSERT INTO v8_empty VALUES (1, 'a', true), (2, 'b', false)")
    finally:
        spark.sql("DROP TABLE IF EXISTS v8_empty")
    assert [(r["id"], r["name"], r["isActive"]) for r in hudi_rs.snapshot(path)] == [(1, "a", True), (2, "b", False)]
    assert parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())["hoodie.table.version"] == "8"
    assert len(hudi_rs.completed_instants(path)) == 1
