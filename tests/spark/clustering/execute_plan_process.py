"""Executes a saved clustering plan in a fresh process: proves the plan on disk is all execution needs.

Usage: execute_plan_process.py <table path> <instant time>; prints the completed instant.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pyspark.sql import SparkSession  # noqa: E402

from hoodpy import HoodieTable  # noqa: E402


def main() -> None:
    path, instant_time = sys.argv[1:3]
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    HoodieTable.for_path(spark, path).clustering.execute(instant_time)
    print("EXECUTED", instant_time, flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
