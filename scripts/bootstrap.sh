#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs hoodpy with its dbt and test extras; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.hoodpy-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dbt,test]"
  touch "$stamp"
fi
command -v java >/dev/null 2>&1 || { echo "hoodpy needs Java 17 for Spark (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
