"""Run by test_dataframe_streaming.py in its own process: a Structured Streaming query writes a folder of JSON
files into a hoodpy table, one file per micro-batch, through
:func:`sql_ext.datasource.stream_sink.sink`, and the process
dies (``os._exit``) right after the sink committed batch ``crash_batch``: before Spark records that batch as
done, so a restart from the checkpoint replays it."""

from __future__ import annotations

import json
import os
import sys


def main(source: str, table: str, checkpoint: str, options_json: str, crash_batch: int) -> None:
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf
    from sql_ext import enable
    from sql_ext.datasource.stream_sink import sink

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config(map=spark_conf()).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    enable(spark)
    write = sink(table, json.loads(options_json), checkpoint_location=checkpoint)

    def write_then_die(batch, batch_id):
        write(batch, batch_id)
        if batch_id == crash_batch:
            print(f"CRASH after committing batch {batch_id}", flush=True)
            os._exit(17)

    schema = "id int, ts long, v string, city string, _hoodie_is_deleted boolean"
    query = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source).writeStream
             .foreachBatch(write_then_die).option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    query.awaitTermination()
    print("FINISHED without crashing", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
