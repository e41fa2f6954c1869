#!/usr/bin/env bash
# Set up (first run) and run the test suite (everything but the `slow` tier). Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python" SPARK_LOCAL_IP=127.0.0.1
exec .venv/bin/python -m pytest -p no:cacheprovider "$@"
