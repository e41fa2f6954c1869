"""Which base files a read takes with their writer's column types (then casts to the table schema)."""

import json

from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType

from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import BaseFileName
from hoodpy.read.written_types import promoted, written_schemas
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import CommitMetadata, OperationType
from hoodpy.timeline.timeline import Timeline


def _avro(**types: str) -> str:
    return json.dumps({"type": "record", "name": "r", "fields": [
        {"name": n, "type": ["null", t], "default": None} for n, t in types.items()]})


def _commit(storage: Storage, t: str, schema: str | None) -> None:
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, Action.COMMIT))
    meta = CommitMetadata(OperationType.UPSERT, extra_metadata={"schema": schema} if schema else {})
    transitions.complete(storage, inflight, meta.to_json_bytes())


def test_files_of_commits_with_promotable_other_types(tmp_path):
    storage = Storage(str(tmp_path))
    storage.mkdirs(".hoodie")
    _commit(storage, "20240101000000001", _avro(k="string", ts="long", v="int"))  # ts and v promoted since
    _commit(storage, "20240101000000002", _avro(k="string", ts="string", v="double"))
    _commit(storage, "20240101000000003", None)  # recorded no schema: taken as the table's
    _commit(storage, "20240101000000004", _avro(k="string", ts="string", v="string"))  # string -> double: no
    table = StructType([StructField("k", StringType()), StructField("ts", StringType()),
                        StructField("v", DoubleType())])
    files = [BaseFile("p", BaseFileName(f"f{n}", "0-1-1", f"2024010100000000{n}"), 1) for n in (1, 2, 3, 4, 5)]
    written = written_schemas(Timeline.load(storage), files, table)
    # The file of commit 5 (not on the timeline: archived or never completed) is taken as the table's too.
    assert list(written) == ["p/f1_0-1-1_20240101000000001.parquet"]
    assert [f.dataType for f in written["p/f1_0-1-1_20240101000000001.parquet"].fields] == [
        StringType(), LongType(), IntegerType()]


def test_promotions_are_hudis():
    assert promoted(LongType(), StringType()) and promoted(IntegerType(), LongType())
    assert not promoted(StringType(), LongType()) and not promoted(DoubleType(), IntegerType())
