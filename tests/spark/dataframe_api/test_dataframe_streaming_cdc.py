"""``spark.readStream.format("hoodpy").option("hoodie.datasource.query.incremental.format", "cdc")``: a stream of
the change data capture rows (op, ts_ms, before, after) of each newly completed commit of a copy-on-write table
with ``hoodie.table.cdc.enabled``, as Hudi's streaming source emits them: each micro-batch equals the batch CDC
query over its offsets, and runs restarted from the checkpoint emit every change exactly once."""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import EARLIEST_INSTANT
from sql_ext.datasource.stream_source import CdcPartition, HoodpyStreamReader
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
CDC = {"hoodie.datasource.query.incremental.format": "cdc"}


def _rows(df) -> Counter:
    return Counter((r.op, r.ts_ms, r.before, r.after) for r in df.collect())


def _stream(spark, path: str, checkpoint: str, seen: dict[int, Counter], **options):
    """One availableNow run of the CDC stream; each micro-batch's rows land in ``seen`` under its batch id."""

    def keep(df, batch_id):
        assert batch_id not in seen, f"batch {batch_id} delivered twice"
        seen[batch_id] = _rows(df)

    query = (spark.readStream.format("hoodpy").options(**CDC, **options).load(path).writeStream
             .foreachBatch(keep).option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    query.awaitTermination()
    return [p for p in query.recentProgress if p["numInputRows"]]


def test_cdc_stream_equals_the_batch_cdc_query_across_restarts(api_spark, tmp_path):
    spark = api_spark
    path, checkpoint = str(tmp_path / "t"), str(tmp_path / "checkpoint")
    t = HoodieTable.create(spark, path, table_name="cdc_stream", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=SMALL_BLOOM,
                           table_properties={"hoodie.table.cdc.enabled": "true",
                                             # images read from the file versions, not the logs
                                             "hoodie.table.cdc.supplemental.logging.mode": "op_key_only"})

    def frame(rows):
        return spark.createDataFrame(rows, DDL)

    times = [t.upsert(frame([(i, "ab"[i % 2], 1, f"v{i}") for i in range(1, 7)])).instant_time]
    seen: dict[int, Counter] = {}
    progress = _stream(spark, path, checkpoint, seen)
    times.append(t.upsert(frame([(2, "a", 2, "u2"), (3, "b", 2, "u3"), (7, "b", 2, "n7")])).instant_time)
    times.append(t.delete(frame([(4, "a", 3, ""), (5, "b", 3, "")])).instant_time)
    progress += _stream(spark, path, checkpoint, seen)  # resumes after the first commit
    times.append(t.insert_overwrite(frame([(8, "a", 4, "o8")])).instant_time)
    times.append(t.upsert(frame([(1, "b", 5, "u1"), (9, "b", 5, "n9")])).instant_time)
    progress += _stream(spark, path, checkpoint, seen)
    assert _stream(spark, path, checkpoint, seen) == []  # nothing new: nothing emitted again

    # Each micro-batch is the batch CDC query over its (start, end] offsets.
    assert len(progress) == len(seen) >= 3
    for p in progress:
        (source,) = p["sources"]
        # Offsets of a Python source are reported as Python reprs; the first batch's start is None (initial).
        start = (ast.literal_eval(source["startOffset"]) or {"instant": EARLIEST_INSTANT})["instant"]
        end = ast.literal_eval(source["endOffset"])["instant"]
        assert seen[p["batchId"]] == _rows(t.read_cdc(start, end)), (start, end)
    # Together: every change of the table exactly once, deletes and the insert_overwrite included.
    streamed = sum(seen.values(), Counter())
    assert streamed == _rows(t.read_cdc(EARLIEST_INSTANT))
    ops = Counter((op, ts) for op, ts, _, _ in streamed.elements())
    assert ops[("d", times[2])] == 2 and ops[("u", times[1])] == 2 and ops[("i", times[1])] == 1
    assert ops[("d", times[3])] == 2 and ops[("i", times[3])] == 1  # partition a replaced: 2 and 6 by 8
    assert {ts for _, ts in ops} == set(times)


def test_cdc_stream_offsets_and_errors(api_spark, tmp_path):
    spark = api_spark
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="cdc_start", record_key_fields=["id"], precombine_field="ts",
                           options=SMALL_BLOOM, table_properties={"hoodie.table.cdc.enabled": "true"})
    times = [t.upsert(spark.createDataFrame([(i, "a", n, f"v{n}") for i in range(3)], DDL)).instant_time
             for n in range(3)]
    stream = spark.readStream.format("hoodpy").options(**CDC).load(path)
    assert stream.columns == ["op", "ts_ms", "before", "after"]
    # A given start instant: only the commits after it, spread over tasks by (commit, file group).
    reader = HoodpyStreamReader({"path": path, "hoodie.datasource.streaming.startOffset": times[0], **CDC},
                                stream.schema)
    parts = reader.partitions(reader.initialOffset(), reader.latestOffset())
    assert parts and all(isinstance(p, CdcPartition) for p in parts)
    assert sorted(s.instant_time for p in parts for s in p.splits) == times[1:]
    read = Counter(tuple(r.values()) for p in parts for b in reader.read(p) for r in b.to_pylist())
    assert read == _rows(t.read_cdc(times[0])) and {op for op, *_ in read} == {"u"}

    plain = str(tmp_path / "plain")
    HoodieTable.create(spark, plain, table_name="plain", record_key_fields=["id"], precombine_field="ts",
                       options=SMALL_BLOOM).upsert(spark.createDataFrame([(1, "a", 1, "x")], DDL))
    with pytest.raises(Exception, match="isn't a CDC hudi table"):
        spark.readStream.format("hoodpy").options(**CDC).load(plain)
