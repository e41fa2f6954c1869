"""Change data capture (hoodie.table.cdc.enabled) on copy-on-write tables: the CDC log files merges write, and
the cdc query (HoodieTable.read_cdc, hudi_table_changes(t, 'cdc', ...), the datasource's
hoodie.datasource.query.incremental.format=cdc) compared with a model of the changes (op, before, after per key
per commit) in each supplemental logging mode; hudi-rs reads the snapshot of such a table unchanged; the cleaner
removes CDC log files with their file version."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.compat import hudi_rs
from cdc_model import COLUMNS, Model
from cdc_model import changes as _changes
from hoodpy_spark_helpers import SMALL_BLOOM, rows

from hoodpy.errors import ChangesNotReadableError, InvalidConfigError
from hoodpy.file_group.log_file import cdc_records
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import EARLIEST_INSTANT

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
MODES = ("DATA_BEFORE_AFTER", "DATA_BEFORE", "OP_KEY_ONLY")


def _build(spark, path: str, mode: str, seed: int) -> SimpleNamespace:
    t = HoodieTable.create(spark, path, table_name=f"cdc_{mode.lower()}", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true",
                                             "hoodie.table.cdc.supplemental.logging.mode": mode.lower()})
    rng = random.Random(seed)
    model, times = Model(), []
    ts = 0

    def batch(n: int) -> list[tuple]:
        nonlocal ts
        ts += 1
        keys = rng.sample(range(12), n)
        return [(k, "ab"[k % 2], ts, f"v{k}_{ts}") for k in keys]

    b = batch(6)
    times.append(t.upsert(spark.createDataFrame(b, DDL)).instant_time)
    model.upsert(times[-1], b)
    for step in ("upsert", "delete", "upsert", "insert_overwrite", "upsert"):
        if step == "delete":
            keys = rng.sample(sorted(model.state), 2) + [99]  # 99 does not exist: no change
            times.append(t.delete(spark.createDataFrame([(k, "ab"[k % 2], ts, "") for k in keys], DDL)).instant_time)
            model.delete(times[-1], keys)
        elif step == "insert_overwrite":
            b = [r for r in batch(3) if r[1] == "a"] or [(0, "a", ts, "v0")]
            times.append(t.insert_overwrite(spark.createDataFrame(b, DDL)).instant_time)
            model.insert_overwrite(times[-1], b)
        else:
            b = batch(5)
            times.append(t.upsert(spark.createDataFrame(b, DDL)).instant_time)
            model.upsert(times[-1], b)
    return SimpleNamespace(t=t, path=path, model=model, times=times, mode=mode)


@pytest.fixture(scope="module", params=MODES)
def cdc_table(request, spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cdc") / "t")
    return _build(spark, path, request.param, seed=MODES.index(request.param) + 7)


def test_cdc_query_matches_the_model_over_every_window(cdc_table):
    s = cdc_table
    assert _changes(s.t.read_cdc(EARLIEST_INSTANT)) == s.model.window(EARLIEST_INSTANT)
    for i, start in enumerate(s.times[:-1]):
        end = s.times[min(i + 2, len(s.times) - 1)]
        assert _changes(s.t.read_cdc(start, end)) == s.model.window(start, end), (s.mode, start, end)


def test_cdc_log_files_hold_the_mode_records(cdc_table):
    s = cdc_table
    props = (Path(s.path) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc.enabled=true" in props
    assert f"hoodie.table.cdc.supplemental.logging.mode={s.mode}" in props
    logs = sorted(Path(s.path).glob("*/.*-cdc"))
    assert logs
    commits = {}
    for f in Path(s.path, ".hoodie").glob("*.commit"):
        for stats in json.loads(f.read_text())["partitionToWriteStats"].values():
            for st in stats:
                for rel, size in (st["cdcStats"] or {}).items():
                    commits[rel] = (f.name.split(".")[0], size)
    assert {str(f.relative_to(s.path)) for f in logs} == set(commits)
    fields = {"DATA_BEFORE_AFTER": {"op", "ts_ms", "before", "after"}, "DATA_BEFORE": {"op", "record_key", "before"},
              "OP_KEY_ONLY": {"op", "record_key"}}[s.mode]
    for f in logs:
        instant, size = commits[str(f.relative_to(s.path))]
        assert f.stat().st_size == size and f.name.endswith(f"_{instant}.log.1_" + f.name.rsplit("_", 1)[1])
        for record in cdc_records(f.read_bytes(), str(f)):
            assert set(record) == fields and record["op"] in "iud"
            if s.mode == "DATA_BEFORE_AFTER":
                assert record["ts_ms"] == instant


def test_readers_ignore_cdc_log_files(cdc_table):
    s = cdc_table
    expected = sorted(s.model.state.values())
    assert rows(s.t.read(), *COLUMNS) == expected
    assert sorted(tuple(r[c] for c in COLUMNS) for r in hudi_rs.snapshot(s.path)) == expected


def test_cdc_through_sql_and_the_datasource(spark, cdc_table):
    from sql_ext import disable, enable

    s = cdc_table
    start, end = s.times[0], s.times[3]
    enable(spark)
    try:
        _check_sql_and_datasource(spark, s.path, start, end, s.model.window(start, end))
    finally:
        disable(spark)


def _check_sql_and_datasource(spark, path, start, end, expected):
    sql = spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'cdc', '{start}', '{end}')")
    assert sql.columns == ["op", "ts_ms", "before", "after"]
    assert _changes(sql) == expected
    ds = (spark.read.format("hoodpy").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.query.incremental.format", "cdc")
          .option("hoodie.datasource.read.begin.instanttime", start)
          .option("hoodie.datasource.read.end.instanttime", end).load(path))
    assert _changes(ds) == expected


def test_json_images_are_printed_as_hudi_prints_them(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="cdc_json", record_key_fields=["id"],
                           precombine_field="ts", options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true"})
    c1 = t.upsert(spark.createDataFrame([(1, "a", 1, "x")], DDL)).instant_time
    c2 = t.upsert(spark.createDataFrame([(1, "a", 2, None)], DDL)).instant_time
    (ins,) = t.read_cdc(EARLIEST_INSTANT, c1).collect()
    (upd,) = t.read_cdc(c1, c2).collect()
    # A new file group: inferred from the base file (Hudi's InternalRowToJsonStringConverter, meta columns in).
    assert ins.op == "i" and ins.ts_ms == c1 and ins.before is None
    assert ins.after.startswith('{"_hoodie_commit_time":"' + c1 + '",') and ins.after.endswith(
        '"id":1,"p":"a","ts":1,"v":"x"}')
    # Logged images: Avro's GenericData.toString of the table columns.
    assert (upd.op, upd.ts_ms) == ("u", c2)
    assert upd.before == '{"id": 1, "p": "a", "ts": 1, "v": "x"}'
    assert upd.after == '{"id": 1, "p": "a", "ts": 2, "v": null}'


def test_a_large_cdc_log_is_read_in_record_ranges_over_the_cores(spark, tmp_path, monkeypatch):
    """A DATA_BEFORE_AFTER CDC log from hoodpy.read.cdc.PART_BYTES up is split into one record range per core
    (each decoded in its own task): the changes are those of the whole log read at once."""
    from hoodpy.read import cdc

    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="cdc_parts", record_key_fields=["id"],
                           precombine_field="ts", options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true"})
    c1 = t.upsert(spark.createDataFrame([(i, "a", 1, f"v{i}") for i in range(40)], DDL)).instant_time
    c2 = t.upsert(spark.createDataFrame([(i, "a", 2, None if i % 3 else "w\"é") for i in range(25, 60)],
                                        DDL)).instant_time
    whole = sorted(tuple(r) for r in t.read_cdc(c1, c2).collect())
    (split,) = cdc.plan_cdc(t, c1, c2)
    assert split.case == cdc.AS_IS and split.cdc_bytes > 0
    monkeypatch.setattr(cdc, "PART_BYTES", 1)
    assert [(p.part, p.parts) for p in cdc._in_parts(split, 2)] == [(0, 2), (1, 2)]
    parts = sorted(tuple(r) for r in t.read_cdc(c1, c2).collect())
    assert parts == whole and len(whole) == 35
    assert sum(op == "u" for op, *_ in whole) == 15 and sum(op == "i" for op, *_ in whole) == 20
    assert ("u", c2, '{"id": 39, "p": "a", "ts": 1, "v": "v39"}', '{"id": 39, "p": "a", "ts": 2, "v": "w\\"é"}') \
        in whole


def test_clean_removes_cdc_logs_with_their_file_version(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="cdc_clean", record_key_fields=["id"], precombine_field="ts",
                           options=SMALL_BLOOM, table_properties={"hoodie.table.cdc.enabled": "true"})
    times = [t.upsert(spark.createDataFrame([(1, "a", i, f"v{i}"), (i + 10, "a", i, "n")], DDL)).instant_time
             for i in range(3)]
    logs = sorted(p.name for p in Path(path).glob(".*-cdc"))
    assert [n.split("_")[1].split(".")[0] for n in logs] == times[1:]
    result = t.cleaning.run({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                             "hoodie.cleaner.fileversions.retained": "1"})
    deleted = {p.rsplit("/", 1)[-1] for ps in result.deleted_files.values() for p in ps}
    assert logs[0] in deleted  # the CDC log of the cleaned version times[1]
    assert sorted(p.name for p in Path(path).glob(".*-cdc")) == logs[1:]
    assert rows(t.read(), *COLUMNS) == sorted([(1, "a", 2, "v2"), (10, "a", 0, "n"), (11, "a", 1, "n"),
                                               (12, "a", 2, "n")])
    # The last commit's changes still read (its CDC log is kept); a window reaching cleaned versions is refused.
    assert _changes(t.read_cdc(times[1])) == [(times[2], "i", 12, None, (12, "a", 2, "n")),
                                              (times[2], "u", 1, (1, "a", 1, "v1"), (1, "a", 2, "v2"))]
    with pytest.raises(ChangesNotReadableError, match="cleaned"):
        t.read_cdc(EARLIEST_INSTANT)


def test_bad_input(spark, tmp_path):
    plain = HoodieTable.create(spark, str(tmp_path / "plain"), table_name="plain", record_key_fields=["id"],
                               precombine_field="ts", options=SMALL_BLOOM)
    plain.upsert(spark.createDataFrame([(1, "a", 1, "x")], DDL))
    with pytest.raises(InvalidConfigError, match="isn't a CDC hudi table.*hoodie.table.cdc.enabled"):
        plain.read_cdc(EARLIEST_INSTANT)
    before = sorted(p.name for p in (tmp_path / "plain").rglob("*"))
    with pytest.raises(InvalidConfigError, match="hoodie.table.cdc.enabled=false, set when it was created"):
        plain.upsert(spark.createDataFrame([(1, "a", 2, "y")], DDL), options={"hoodie.table.cdc.enabled": "true"})
    assert sorted(p.name for p in (tmp_path / "plain").rglob("*")) == before  # nothing written
    with pytest.raises(InvalidConfigError, match="hoodie.table.cdc.supplemental.logging.mode"):
        HoodieTable.create(spark, str(tmp_path / "bad"), table_name="bad", record_key_fields=["id"],
                           table_properties={"hoodie.table.cdc.enabled": "true",
                                             "hoodie.table.cdc.supplemental.logging.mode": "everything"})
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").rglob("hoodie.properties"))


def test_rollback_removes_the_commits_cdc_logs(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="cdc_rollback", record_key_fields=["id"], precombine_field="ts",
                           options=SMALL_BLOOM, table_properties={"hoodie.table.cdc.enabled": "true"})
    c1 = t.upsert(spark.createDataFrame([(1, "a", 1, "x")], DDL)).instant_time
    c2 = t.upsert(spark.createDataFrame([(1, "a", 2, "y")], DDL)).instant_time
    assert [p.name.split("_")[1].split(".")[0] for p in Path(path).glob(".*-cdc")] == [c2]
    t.rollback_to_instant(c2)
    assert list(Path(path).glob(".*-cdc")) == []
    assert rows(t.read(), *COLUMNS) == [(1, "a", 1, "x")]
    assert _changes(t.read_cdc(EARLIEST_INSTANT)) == [(c1, "i", 1, None, (1, "a", 1, "x"))]


def test_sql_table_created_with_cdc(spark, tmp_path):
    """CREATE TABLE ... TBLPROPERTIES ('hoodie.table.cdc.enabled'='true'), SQL DML, then the SQL cdc query; the
    table keeps a metadata table, whose listing holds the CDC log files too."""
    from sql_ext import disable, enable

    enable(spark)
    try:
        spark.sql("CREATE DATABASE IF NOT EXISTS hoodpy_cdc_sql")
        spark.sql(f"CREATE TABLE hoodpy_cdc_sql.t (id INT, v STRING, ts BIGINT) USING hoodpy "
                  f"LOCATION '{tmp_path / 't'}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
                  "'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'data_before', "
                  "'hoodie.metadata.enable' = 'true')")
        spark.sql("INSERT INTO hoodpy_cdc_sql.t VALUES (1, 'a', 1), (2, 'b', 1)")
        spark.sql("UPDATE hoodpy_cdc_sql.t SET v = 'a2', ts = 2 WHERE id = 1")
        spark.sql("DELETE FROM hoodpy_cdc_sql.t WHERE id = 2")
        got = spark.sql("SELECT op, before, after FROM hudi_table_changes('hoodpy_cdc_sql.t', 'cdc', 'earliest')")
        changes = sorted((r.op, _image(r.before), _image(r.after)) for r in got.collect())
        assert changes == [("d", (2, "b", 1), None), ("i", None, (1, "a", 1)), ("i", None, (2, "b", 1)),
                           ("u", (1, "a", 1), (1, "a2", 2))]
        t = HoodieTable.for_path(spark, str(tmp_path / "t"))
        assert t.properties["hoodie.table.cdc.supplemental.logging.mode"] == "DATA_BEFORE"
        from hoodpy.file_group.fs_view import table_group_files
        from hoodpy.metadata_table.reader import has_files_partition

        assert has_files_partition(t.properties)  # the listing below comes from the metadata table
        listed = {f.file_name for f in table_group_files(t.storage, t.timeline)}
        on_disk = {p.name for p in (tmp_path / "t").glob(".*-cdc")}
        assert len(on_disk) == 2 and on_disk <= listed
    finally:
        spark.sql("DROP DATABASE IF EXISTS hoodpy_cdc_sql CASCADE")
        disable(spark)


def _image(text: str | None) -> tuple | None:
    return None if text is None else tuple(json.loads(text)[c] for c in ("id", "v", "ts"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_json_images_of_decimals_binary_maps_and_structs(spark, tmp_path, table_type):
    """Logged images (copy-on-write merges) as Avro prints the record Spark converts: a decimal is its fixed's
    signed bytes; rows read from files (new base files, merge-on-read logs) as Jackson prints them: binary in
    base64, maps and structs as objects, decimals as numbers (hoodpy.read.cdc_images)."""
    from decimal import Decimal

    ddl = "id int, ts long, d decimal(10,2), b binary, m map<string,int>, s struct<a:int,c:string>"
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="cdc_types", record_key_fields=["id"],
                           precombine_field="ts", table_type=table_type, options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true"})
    c1 = t.upsert(spark.createDataFrame([(1, 1, Decimal("1.50"), bytearray(b"\x00a"), {"k": 1}, (3, "x"))],
                                        ddl)).instant_time
    c2 = t.upsert(spark.createDataFrame([(1, 2, Decimal("-2.00"), bytearray(b"z"), {"k": 2}, (4, None))], ddl),
                  options={"hoodie.parquet.small.file.limit": "0"}).instant_time
    (ins,) = t.read_cdc(EARLIEST_INSTANT, c1).collect()
    assert ins.op == "i" and ins.after.endswith(
        '"id":1,"ts":1,"d":1.50,"b":"AGE=","m":{"k":1},"s":{"a":3,"c":"x"}}')
    (upd,) = t.read_cdc(c1, c2).collect()
    assert upd.op == "u"
    if table_type == "COPY_ON_WRITE":  # a CDC log file of DATA_BEFORE_AFTER records
        assert upd.before == ('{"id": 1, "ts": 1, "d": [0, 0, 0, 0, -106], "b": {"bytes": "\\u0000a"}, '
                              '"m": {"k": 1}, "s": {"a": 3, "c": "x"}}')
        assert upd.after == ('{"id": 1, "ts": 2, "d": [-1, -1, -1, -1, 56], "b": {"bytes": "z"}, '
                             '"m": {"k": 2}, "s": {"a": 4, "c": null}}')
    else:  # the log file against the base file: rows with meta columns
        assert upd.before.endswith('"id":1,"ts":1,"d":1.50,"b":"AGE=","m":{"k":1},"s":{"a":3,"c":"x"}}')
        assert upd.after.endswith('"id":1,"ts":2,"d":-2.00,"b":"eg==","m":{"k":2},"s":{"a":4,"c":null}}')
