#!/usr/bin/env bash
# Set up (first run) and run the demo: create a table, upsert twice, print the snapshot and the timeline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python" SPARK_LOCAL_IP=127.0.0.1
exec .venv/bin/python scripts/demo.py "$@"
