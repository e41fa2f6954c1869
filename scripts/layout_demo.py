"""Makes docs/layout_zorder.png and the README's command-line examples: a rides table bulk-inserted as eight
files of random pickup points, upserted once, then z-order clustered on the pickup coordinates.

Run: PYSPARK_PYTHON=.venv/bin/python .venv/bin/python scripts/layout_demo.py [OUT_DIR]
(the table goes under OUT_DIR, default demo_output/layout; the picture into docs/).
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hoodpy import HoodieTable  # noqa: E402
from hoodpy.cli import main as hoodpy_cli  # noqa: E402
from hoodpy.config.clustering import ClusteringConfig  # noqa: E402
from hoodpy.spark_worker import spark_conf  # noqa: E402

SCHEMA = "ride_id int, pickup_x int, pickup_y int, fare double, ts long"  # pickup on a 10 km grid, in metres
ROWS = 4000
SIZING = {"hoodie.parquet.max.file.size": str(500 * 1024), "hoodie.copyonwrite.record.size.estimate": "1024"}


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "demo_output" / "layout"
    path = out / "rides"
    shutil.rmtree(path, ignore_errors=True)
    spark = (
        SparkSession.builder.master("local[2]").appName("hoodpy-layout-demo")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC").config(map=spark_conf()).getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rnd = random.Random(42)

    def rides(ids, ts):
        points = [(i, rnd.randrange(10_000), rnd.randrange(10_000), round(rnd.uniform(3, 80), 2), ts) for i in ids]
        return spark.createDataFrame(points, SCHEMA)

    table = HoodieTable.create(spark, str(path), table_name="rides", record_key_fields=["ride_id"],
                               precombine_field="ts")
    table.bulk_insert(rides(range(ROWS), 1), options=SIZING)
    table.upsert(rides(range(0, ROWS, 10), 2))
    total = sum(bf.size for bf in table.file_system_view().latest_base_files())
    table.clustering.run(sort_columns="pickup_x,pickup_y", layout="z-order",
                         options={ClusteringConfig.TARGET_FILE_MAX_BYTES.key: total // 8 + 1})
    spark.stop()
    picture = REPO / "docs" / "layout_zorder.png"
    for argv in (["commits", str(path)], ["files", str(path), "--latest", "--limit", "3"], ["stats", str(path)],
                 ["layout", str(path), "--column", "pickup_x", "--out", str(picture)]):
        print(f"$ hoodpy {' '.join(argv)}")
        hoodpy_cli(argv)


if __name__ == "__main__":
    main()
