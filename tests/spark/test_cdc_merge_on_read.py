"""Change data capture on merge-on-read tables (hoodie.table.cdc.enabled), as Java Hudi 0.14 returns it: a
deltacommit's log files are read against the file slice before them (HoodieCDCInferenceCase LOG_FILE), new
base files are inserts, small base files merged in a deltacommit carry CDC log files (AS_IS), compaction adds
no changes, insert_overwrite deletes the replaced slices' merged rows. One MOR write sequence per supplemental
logging mode, checked against a row model: every commit's changes and every (start, end] window; the table
left readable by hudi-rs with the model's snapshot."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.compat import hudi_rs
from cdc_model import COLUMNS, Model
from cdc_model import changes as _changes
from hoodpy_spark_helpers import SMALL_BLOOM, rows

from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import EARLIEST_INSTANT

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
MODES = ("DATA_BEFORE_AFTER", "DATA_BEFORE", "OP_KEY_ONLY")
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # updates go to logs, inserts to new file groups


def _row(k: int, ts: int, tag: str = "") -> tuple:
    return (k, "ab"[k % 2], ts, f"v{k}_{ts}{tag}")


def _build(spark, path: str, mode: str) -> SimpleNamespace:
    t = HoodieTable.create(spark, path, table_name=f"mor_cdc_{mode.lower()}", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", table_type="MERGE_ON_READ",
                           options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true",
                                             "hoodie.table.cdc.supplemental.logging.mode": mode.lower()})
    model, times, steps = Model(), [], []

    def upsert(batch, step, options=None):
        times.append(t.upsert(spark.createDataFrame(batch, DDL), options=options).instant_time)
        steps.append(step)
        model.upsert(times[-1], batch)

    upsert([_row(k, 1) for k in range(6)], "insert")  # new file groups: base files of inserts
    # Small base-file-only slices take the inserts: merged into new base files, with CDC log files.
    upsert([_row(0, 2), _row(1, 2), _row(6, 2), _row(7, 2)], "small-file merge")
    # Updates (one stale: ts older than the stored row) appended to logs, inserts into new file groups.
    upsert([_row(2, 3), _row(3, 3), _row(0, 1, "stale"), _row(8, 3), _row(9, 3)], "log upsert", NO_SMALL_FILES)
    times.append(t.delete(spark.createDataFrame([_row(k, 4) for k in (3, 6, 99)], DDL)).instant_time)
    steps.append("log delete")
    model.delete(times[-1], [3, 6, 99])  # 99 does not exist: no change
    # Keys whose slices have log files already: the before rows merge the base file with those logs.
    upsert([_row(2, 5), _row(7, 5), _row(3, 5)], "upsert over logs", NO_SMALL_FILES)
    (compaction,) = t.compaction.run()
    times.append(compaction.instant_time)
    steps.append("compaction")
    upsert([_row(2, 6), _row(4, 6), _row(6, 6), _row(10, 6)], "upsert after compaction", NO_SMALL_FILES)
    upsert([_row(1, 7), _row(5, 7)], "log upsert 2", NO_SMALL_FILES)
    overwrite = [_row(11, 8), _row(13, 8)]  # partition "b"
    times.append(t.insert_overwrite(spark.createDataFrame(overwrite, DDL)).instant_time)
    steps.append("insert_overwrite")
    model.insert_overwrite(times[-1], overwrite)
    return SimpleNamespace(t=t, path=path, model=model, times=times, steps=steps, mode=mode,
                           compaction=compaction.instant_time)


@pytest.fixture(scope="module", params=MODES)
def mor_cdc(request, spark, tmp_path_factory):
    return _build(spark, str(tmp_path_factory.mktemp("mor_cdc") / "t"), request.param)


def test_each_commits_changes_match_the_model(mor_cdc):
    s = mor_cdc
    previous = EARLIEST_INSTANT
    for ts, step in zip(s.times, s.steps, strict=True):
        got = _changes(s.t.read_cdc(previous, ts))
        assert got == s.model.window(previous, ts), (s.mode, step)
        assert got or step == "compaction", step  # every write in the sequence changed something
        previous = ts
    assert _changes(s.t.read_cdc(EARLIEST_INSTANT)) == s.model.window(EARLIEST_INSTANT)


def test_every_window_matches_the_model(mor_cdc):
    s = mor_cdc
    for start, end in itertools.combinations([EARLIEST_INSTANT, *s.times], 2):
        if (start, end) == (EARLIEST_INSTANT, s.times[-1]):
            continue  # the first test reads it
        assert _changes(s.t.read_cdc(start, end)) == s.model.window(start, end), (s.mode, start, end)


def test_compaction_adds_no_changes_and_no_cdc_logs(mor_cdc):
    s = mor_cdc
    i = s.times.index(s.compaction)
    assert s.t.read_cdc(s.times[i - 1], s.compaction).count() == 0
    # The window across the compaction holds each deltacommit's changes once.
    assert _changes(s.t.read_cdc(s.times[i - 2], s.times[i + 1])) == s.model.window(s.times[i - 2], s.times[i + 1])
    meta = json.loads(Path(s.path, ".hoodie", f"{s.compaction}.commit").read_text())
    assert meta["operationType"] == "COMPACT"
    assert all(not st["cdcStats"] for stats in meta["partitionToWriteStats"].values() for st in stats)


def test_cdc_log_files_only_where_base_files_were_merged(mor_cdc):
    """Deltacommits' log appends log no CDC (Java's append handle writes none); the small-file merge does."""
    s = mor_cdc
    cdc_logs, log_stats = {}, 0
    for f in Path(s.path, ".hoodie").glob("*.deltacommit"):
        for stats in json.loads(f.read_text())["partitionToWriteStats"].values():
            for st in stats:
                cdc_logs.update({rel: f.name.split(".")[0] for rel in (st["cdcStats"] or {})})
                if ".log." in st["path"]:
                    log_stats += 1
                    assert not st["cdcStats"] and st["baseFile"] and st["path"].rsplit("/", 1)[1] in st["logFiles"]
    on_disk = {str(p.relative_to(s.path)) for p in Path(s.path).glob("*/.*-cdc")}
    assert on_disk == set(cdc_logs) and log_stats >= 4
    assert set(cdc_logs.values()) == {s.times[s.steps.index("small-file merge")]}


def test_log_file_images_are_merged_rows_with_meta_columns(mor_cdc):
    s = mor_cdc
    i = s.steps.index("upsert over logs")
    changes = {json.loads(r.after or r.before)["id"]: r for r in s.t.read_cdc(s.times[i - 1], s.times[i]).collect()}
    upd = changes[2]  # updated at times[2] in a log, now again: the before image is the log's row
    before, after = json.loads(upd.before), json.loads(upd.after)
    assert upd.op == "u" and before["_hoodie_commit_time"] == s.times[2] and after["_hoodie_commit_time"] == s.times[i]
    assert list(after)[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                               "_hoodie_partition_path", "_hoodie_file_name"]
    # Log records carry the file id (not a file name) as _hoodie_file_name, as Java's append handle writes it.
    assert after["_hoodie_record_key"] == "2" and after["_hoodie_file_name"] == before["_hoodie_file_name"]
    assert not after["_hoodie_file_name"].endswith(".parquet")
    assert changes[3].op == "i" and changes[3].before is None  # deleted at times[3], back as an insert


def test_readers_see_the_model_and_hudi_rs_agrees(mor_cdc):
    s = mor_cdc
    expected = sorted(s.model.state.values())
    assert rows(s.t.read(), *COLUMNS) == expected
    assert sorted(tuple(r[c] for c in COLUMNS) for r in hudi_rs.snapshot(s.path)) == expected


def test_cdc_through_sql(spark, mor_cdc):
    from sql_ext import disable, enable

    s = mor_cdc
    start, end = s.times[1], s.times[5]
    enable(spark)
    try:
        got = spark.sql(f"SELECT * FROM hudi_table_changes('{s.path}', 'cdc', '{start}', '{end}')")
        assert got.columns == ["op", "ts_ms", "before", "after"]
        assert _changes(got) == s.model.window(start, end)
    finally:
        disable(spark)
