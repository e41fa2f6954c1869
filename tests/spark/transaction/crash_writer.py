"""A writer process that the crash tests kill with SIGKILL at a chosen point of a write.

Usage: crash_writer.py <table path> <batch json> <operation> <fault> [<seed>]
<operation> is a write operation, or ``compact`` (schedule and execute a compaction of a merge-on-read table;
the batch is ignored). Faults are injected by patching hoodpy functions in this process only; production code has no hooks.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pyspark.sql import SparkSession  # noqa: E402

from hoodpy import HoodieTable  # noqa: E402
from hoodpy.timeline import transitions  # noqa: E402
from hoodpy.write import commit as commit_step  # noqa: E402

SCHEMA = "id int, part string, ts long, val string"


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(fault: str, seed: int, path: str) -> None:
    if fault == "after_requested":
        transitions.transition_to_inflight = lambda *a, **k: die()
    elif fault == "after_files":
        commit_step.commit = lambda *a, **k: die()
    elif fault == "during_file_writes":
        # Die as soon as the first new base or log file appears: the executor may still be writing it, and
        # the write's other file groups are not written yet.
        table_dir = path

        def data_files():
            # os.walk, pruned at .hoodie: the rollback this write starts with deletes .hoodie/.temp/<instant>
            # while we walk, and rglob raises FileNotFoundError on a vanished folder, ending the watch.
            found = set()
            for root, dirs, files in os.walk(table_dir):
                dirs[:] = [d for d in dirs if d != ".hoodie"]
                found.update(os.path.join(root, f) for f in files if f.endswith(".parquet") or ".log." in f)
            return found

        before = data_files()

        def watch():
            while not data_files() - before:
                time.sleep(0.002)
            die()

        threading.Thread(target=watch, daemon=True).start()
    elif fault == "during_commit":
        real_publish = transitions.Storage.publish

        def half_commit(self, rel, data):
            if rel.endswith((".commit", ".deltacommit", ".replacecommit")):
                parent, name = self.full_path(rel).rsplit("/", 1)
                self.fs.create_dir(parent, recursive=True)
                # As a kill inside Storage.publish leaves it: half a temporary file, never linked into place.
                with self.fs.open_output_stream(f"{parent}/.{name}.crash.tmp") as f:
                    f.write(data[: len(data) // 2])
                die()
            return real_publish(self, rel, data)

        transitions.Storage.publish = half_commit
    elif fault == "during_rollback":
        from hoodpy.services import rollback as rb

        real_delete = rb.Storage.delete
        calls = {"n": 0}

        def deleting(self, rel):
            calls["n"] += 1
            if calls["n"] > 1:
                die()
            return real_delete(self, rel)

        rb.Storage.delete = deleting
    elif fault == "random":
        delay = random.Random(seed).uniform(0.5, 12.0)
        threading.Timer(delay, die).start()
    elif fault != "none":
        raise SystemExit(f"unknown fault {fault}")


def main() -> None:
    path, batch_json, operation, fault = sys.argv[1:5]
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    rows = [tuple(r) for r in json.loads(batch_json)]
    table = HoodieTable.for_path(spark, path, options={"hoodie.index.bloom.num_entries": "100"})
    if fault != "during_rollback":
        install(fault, seed, path)
    df = spark.createDataFrame(rows, SCHEMA)
    if fault == "during_rollback":
        # Crash while rolling back the previous failed write, before this write starts.
        install(fault, seed, path)
    if operation == "compact":
        if not table.compaction.run():
            print("NOTHING TO COMPACT", flush=True)  # no instant, so no fault point was reached
    else:
        table.write(df, operation)
    print("COMMITTED", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
