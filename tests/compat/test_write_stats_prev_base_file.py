"""``prevBaseFile`` in the write stats of Hudi 1.x commits (table versions 8 and 9): a merge that rewrites a
base file names the file it replaced, as Java 1.x writes it; a new file group and a log file name none.

The fact comes from the Java samples: in ``hudi-rs/sample_table/cow/v8_nonpartitioned`` the second UPSERT's
stat has ``prevBaseFile`` = the first commit's base file name (``<fileId>_<token>_<prevCommit>.parquet``), the
inserts' stats null; the ``mor/avro/v9_*`` deltacommits' log-file stats null too.
"""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pytest

from java_samples import unzip_sample
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.compat, pytest.mark.spark]


def _stats(path: Path, instant: str, action: str) -> list[dict]:
    [raw] = [f.read_bytes() for f in Path(path, ".hoodie", "timeline").glob(f"{instant}_*.{action}")]
    [record] = fastavro.reader(io.BytesIO(raw))
    return [s for group in record["partitionToWriteStats"].values() for s in group]


def test_java_v8_upsert_names_the_replaced_base_file(spark, tmp_path):
    path = unzip_sample("hudi-rs/sample_table/cow/v8_nonpartitioned", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    first, second = [i.timestamp for i in table.timeline.completed_commits()]
    [java_insert] = _stats(path, first, "commit")
    java_stats = {s["numUpdateWrites"] > 0: s for s in _stats(path, second, "commit")}
    assert java_insert["prevBaseFile"] is None
    assert java_stats[True]["prevBaseFile"] == java_insert["path"].rsplit("/", 1)[-1]

    before = {bf.file_id: bf.file_name for bf in table.file_system_view().latest_base_files()}
    rows = table.read().drop(*[c for c in table.read().columns if c.startswith("_hoodie_")])
    updated = rows.limit(1).withColumn("name", rows["name"].substr(1, 1))
    table.upsert(updated)
    table = HoodieTable.for_path(spark, str(path))
    latest = table.timeline.completed_commits()[-1]
    [stat] = _stats(path, latest.timestamp, "commit")
    assert stat["numUpdateWrites"] == 1
    assert stat["prevBaseFile"] == before[stat["fileId"]]
    assert stat["prevBaseFile"].endswith(f"_{stat['prevCommit']}.parquet")  # the form Java's stat has
    assert table.timeline.commit_metadata(latest).write_stats[0].prev_base_file == before[stat["fileId"]]


def test_new_file_groups_and_log_files_name_no_base_file(spark, tmp_path):
    path = str(tmp_path / "mor8")
    table = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"],
                               table_type="MERGE_ON_READ", options={"hoodie.write.table.version": "8"})
    table.insert(spark.createDataFrame([(1, "a"), (2, "b")], "id INT, name STRING"))
    table = HoodieTable.for_path(spark, path)
    table.upsert(spark.createDataFrame([(1, "aa")], "id INT, name STRING"),
                 options={"hoodie.parquet.small.file.limit": "0"})
    first, second = table.timeline.completed_commits()
    [created] = _stats(Path(path), first.timestamp, "deltacommit")
    [logged] = _stats(Path(path), second.timestamp, "deltacommit")
    assert created["prevBaseFile"] is None and created["numInserts"] == 2
    assert ".log." in logged["path"] and logged["prevBaseFile"] is None
