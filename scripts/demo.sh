#!/usr/bin/env bash
# Set up (first run) and run the main job: the integration_project dbt build over two batches of change events.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python" SPARK_LOCAL_IP=127.0.0.1
exec .venv/bin/python integration_project/run_demo.py "$@"
