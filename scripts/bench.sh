#!/usr/bin/env bash
# Benchmarks (issue #8): hoodpy vs delta-rs vs plain Spark on TPC-H lineitem.
#   bash scripts/bench.sh --sf 1                      # every workload at SF 1 -> benchmarks/results/sf1/
#   bash scripts/bench.sh --sf 0.25 --workloads upsert,read --reps 3
# Needs the bench extra: .venv/bin/pip install -e '.[bench]'. Any option of benchmarks/run.py passes through.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
sf=1
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[$i]} == --sf ]] && sf=${args[$((i + 1))]}
done
out=(--out "benchmarks/results/sf${sf}")
for a in "$@"; do [[ $a == --out ]] && out=(); done
export PYSPARK_PYTHON=${PYSPARK_PYTHON:-$PWD/$PY} SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1}
exec "$PY" benchmarks/run.py "${out[@]}" "$@"
