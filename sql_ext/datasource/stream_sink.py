"""``df.writeStream.format("hoodpy").options(...).option("checkpointLocation", ...).start(path)``: a hoodpy table
as a Structured Streaming sink, exactly once.

The query runs through ``foreachBatch`` (a Python data source's stream writer commits in a worker without a
SparkSession, so it cannot run the upsert): each micro-batch is one write (:mod:`~sql_ext.datasource.batch_write`
in append mode: the operation, upsert by default, creates the table on the first batch) and so one commit.
As Hudi's streaming sink does, the commit's extraMetadata records the batch under
``_hudi_streaming_sink_checkpoint`` as ``{"<identifier>": "<batch id>"}``
(``hoodie.datasource.write.streaming.checkpoint.identifier``, default ``default_single_writer``), and hoodpy adds
the query's id (``_hoodpy_streaming_query_id``, from the checkpoint's ``metadata`` file). Before writing a batch
the sink looks for the newest commit that recorded its identifier: a batch id at or below it, from the same query,
was committed already (Spark replays the last batch after a crash between the commit and its own checkpoint) and
is skipped. A new query (a new checkpoint location) writing with the same identifier starts its batch ids again at
0, so a different query id never skips.

Table services run inline from the sink's options after each commit (clustering, clean, archival), as
``HoodieTable.write`` runs them. Without the builder, :func:`sink` is the same sink as a ``foreachBatch``
function::

    query = df.writeStream.foreachBatch(sink(path, options)).option("checkpointLocation", cp).start()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hoodpy.config.write import WriteConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.storage import open_storage
from sql_ext.datasource.batch_write import (
    APPEND,
    WriteRequest,
    require_definition,
    table_definition,
)
from sql_ext.datasource.batch_write import save as save_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

    from hoodpy.timeline.timeline import Timeline
    from sql_ext.datasource.builders import Recorded

SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"  # Hudi's HoodieStreamingSink key
QUERY_ID_KEY = "_hoodpy_streaming_query_id"
CHECKPOINT_LOCATION = "checkpointLocation"
# Stream writer calls replayed on the foreachBatch writer that serves the sink.
REPLAYED_CALLS = frozenset({"option", "options", "trigger", "queryName", "outputMode"})


class HoodieStreamSink:
    """The function ``foreachBatch`` calls: writes a micro-batch into the table as one commit, unless that batch
    of this query was committed already. Picklable (Spark Connect runs it in a server-side Python process)."""

    def __init__(self, path: str, options: Mapping[str, Any], checkpoint_location: str | None = None):
        self.request = WriteRequest.of(path, APPEND, options)
        self.checkpoint_location = checkpoint_location or self.request.options.get(CHECKPOINT_LOCATION)
        config = self.request.config
        self.identifier = config.get(WriteConfig.STREAMING_CHECKPOINT_IDENTIFIER)
        prefix = config.get(WriteConfig.COMMIT_METADATA_KEY_PREFIX)
        if not prefix or not SINK_CHECKPOINT_KEY.startswith(prefix) or not QUERY_ID_KEY.startswith(prefix):
            raise InvalidConfigError(WriteConfig.COMMIT_METADATA_KEY_PREFIX.key, prefix,
                                     f"the streaming sink records its checkpoint under {SINK_CHECKPOINT_KEY}, so "
                                     "the prefix must be one it starts with (such as the default _)")

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        storage = open_storage(spark, self.request.path, self.request.options)
        query_id = self.query_id(spark)
        if storage.exists(".hoodie/hoodie.properties"):
            from hoodpy.timeline.timeline import Timeline

            done = committed_batch(Timeline.load(storage), self.identifier, query_id)
            if done is not None and batch_id <= done:
                return  # a replay of a batch this query committed: applying it again would duplicate it
        options = {**self.request.options, SINK_CHECKPOINT_KEY: json.dumps({self.identifier: str(batch_id)})}
        if query_id is not None:
            options[QUERY_ID_KEY] = query_id
        save_batch(batch, WriteRequest(self.request.path, APPEND, options, self.request.partition_by))

    def query_id(self, spark) -> str | None:
        """The streaming query's id, from ``<checkpoint location>/metadata`` (Spark writes it before the first
        batch and keeps it across restarts from the checkpoint); None without a readable one."""
        if not self.checkpoint_location:
            return None
        try:
            text = open_storage(spark, self.checkpoint_location).read_bytes("metadata")
            return str(json.loads(text)["id"])
        except Exception:  # noqa: BLE001 -- no metadata file where we look: skip by batch id alone, as Hudi does
            return None

    def check(self, df: DataFrame) -> None:
        """Fail before the query starts on what the first batch would fail on: table options missing or wrong
        for a new table, options that contradict the existing one."""
        from hoodpy.table import HoodieTable

        spark = df.sparkSession
        storage = open_storage(spark, self.request.path, self.request.options)
        if not storage.exists(".hoodie/hoodie.properties"):
            table_definition(df, self.request, storage.base_uri)
            return
        require_definition(HoodieTable.for_path(spark, storage.base_uri, options=self.request.hoodie_options),
                           self.request.config)


def committed_batch(timeline: Timeline, identifier: str, query_id: str | None) -> int | None:
    """The newest batch id that a commit recorded for ``identifier`` (None: none, or it came from another query
    than ``query_id``), newest completion first as Hudi's ``getValidCheckpointForCurrentWriter`` scans."""
    for instant in sorted(timeline.completed_commits(), key=lambda i: i.completed_at, reverse=True):
        extra = timeline.commit_metadata(instant).extra_metadata
        text = extra.get(SINK_CHECKPOINT_KEY)
        if not text:
            continue
        try:
            batches = json.loads(text)
        except ValueError:
            continue
        if identifier not in batches:
            continue
        stored_query = extra.get(QUERY_ID_KEY)
        if query_id is not None and stored_query is not None and stored_query != query_id:
            return None
        return int(batches[identifier])
    return None


def sink(path: str, options: Mapping[str, Any] | None = None, *,
         checkpoint_location: str | None = None) -> HoodieStreamSink:
    """A ``foreachBatch`` function writing each micro-batch into the hoodpy table at ``path`` exactly once
    (``checkpoint_location``: the query's, so a new query is told from a restarted one)."""
    return HoodieStreamSink(path, options or {}, checkpoint_location)


def start_sink(df: DataFrame, path: str, recorded: Recorded) -> StreamingQuery:
    """``writeStream.format("hoodpy")...start(path)``: the same query through ``foreachBatch``; the writer's
    options, trigger, query name and output mode are replayed on a fresh writer."""
    options = dict(recorded.options)
    if recorded.partition_by:
        options.setdefault("hoodie.datasource.write.partitionpath.field", ",".join(recorded.partition_by))
    function = HoodieStreamSink(path, options)
    function.check(df)
    writer = df.writeStream
    for name, args, kwargs in recorded.calls:
        if name in REPLAYED_CALLS:
            getattr(writer, name)(*args, **kwargs)
    return writer.foreachBatch(function).start()

