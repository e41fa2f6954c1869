"""Per-operator split of snapshot reads (Q1-style aggregate) of the tables benchmarks/mor_read_profile.py
--build leaves in <work>/scratch: each table is read once to warm up, then once more measured, with Spark's
event log on; printed per measured read: the final (adaptive) physical plan with each operator's SQL metrics
(scan time, rows, Python worker time and bytes returned, codegen stage durations), each stage's executor CPU
and run seconds, and each task's launch and finish times relative to the read's start (the critical path:
jobs run one after another, a core idle at a stage's tail).

    python benchmarks/mor_read_operators.py --work /tmp/mr-work --tables mor-read-cow,mor-read-1

Executor CPU counts task threads only (not GC, JIT, the driver's planning or the Python workers): compare it
with mor_read_profile.py's cpu_jvm_s for the rest.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import q1_aggregate  # noqa: E402
from mor_upsert_timeline import event_log_session  # noqa: E402


def _metric(value: int, kind: str) -> str:
    if kind == "nsTiming":
        return f"{value / 1e9:.3g}s"
    if kind == "timing":
        return f"{value / 1e3:.3g}s"
    return f"{value:.3g}"


def _plan_lines(node: dict, values: dict[int, int], depth: int = 0) -> list[str]:
    shown = [f"{m['name']}={_metric(values[m['accumulatorId']], m['metricType'])}"
             for m in node.get("metrics", []) if values.get(m["accumulatorId"])]
    lines = [] if node["nodeName"] == "InputAdapter" else ["  " * depth + node["nodeName"] + "  " + ", ".join(shown)]
    for child in node.get("children", []):
        lines += _plan_lines(child, values, depth + (node["nodeName"] != "InputAdapter"))
    return lines


def report(event_log: Path, wanted: dict[str, str]) -> None:
    """Print the reads whose job description is a key of ``wanted`` (description -> table name)."""
    plans, started, values = {}, {}, defaultdict(int)
    stage_exec: dict[int, int] = {}
    stage_cpu: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    tasks: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    described: dict[int, str] = {}
    for line in event_log.open():
        e = json.loads(line)
        kind = e["Event"]
        if kind.endswith("SQLExecutionStart"):
            plans[e["executionId"]], started[e["executionId"]] = e["sparkPlanInfo"], e["time"]
            described[e["executionId"]] = e.get("description", "")
        elif kind.endswith("SQLAdaptiveExecutionUpdate"):
            plans[e["executionId"]] = e["sparkPlanInfo"]  # the plan as it finally ran
        elif kind == "SparkListenerJobStart" and "spark.sql.execution.id" in e.get("Properties", {}):
            for stage in e["Stage IDs"]:
                stage_exec[stage] = int(e["Properties"]["spark.sql.execution.id"])
        elif kind == "SparkListenerTaskEnd":
            for acc in e["Task Info"].get("Accumulables", []):
                if isinstance(acc.get("Update"), (int, str)) and str(acc["Update"]).lstrip("-").isdigit():
                    values[acc["ID"]] += int(acc["Update"])
            metrics = e.get("Task Metrics") or {}
            stage_cpu[e["Stage ID"]][0] += metrics.get("Executor CPU Time", 0) / 1e9
            stage_cpu[e["Stage ID"]][1] += metrics.get("Executor Run Time", 0) / 1e3
            info = e["Task Info"]
            tasks[e["Stage ID"]].append((info["Index"], info["Launch Time"], info["Finish Time"]))
    for xid, plan in sorted(plans.items()):
        if described[xid] not in wanted:
            continue
        print(f"== {wanted[described[xid]]}")
        print("\n".join(_plan_lines(plan, values)))
        for stage in sorted(s for s, x in stage_exec.items() if x == xid):
            cpu, run = stage_cpu[stage]
            spans = ", ".join(f"#{i} {(a - started[xid]) / 1e3:.2f}-{(b - started[xid]) / 1e3:.2f}"
                              for i, a, b in sorted(tasks[stage], key=lambda t: t[1]))
            print(f"  stage {stage}: executor CPU {cpu:.2f} s, run {run:.2f} s; tasks (s from the read's start):",
                  spans)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", default="/tmp/mr-work")
    p.add_argument("--tables", default="mor-read-cow,mor-read-1")
    p.add_argument("--driver-memory", default="3g")
    args = p.parse_args()
    spark, logs = event_log_session("mor-read-operators", Path(tempfile.mkdtemp(prefix="mor-read-operators-")),
                                    args.driver_memory)
    from hoodpy.table import HoodieTable

    names = args.tables.split(",")
    wanted = {}
    for n in names:  # warm-up: JIT, Python workers
        q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n)).read())
    for n in names:
        description = f"mor_read_operators {n}"
        spark.sparkContext.setJobDescription(description)
        q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n)).read())
        wanted[description] = n
    spark.stop()
    report(next(logs.iterdir()), wanted)


if __name__ == "__main__":
    main()
