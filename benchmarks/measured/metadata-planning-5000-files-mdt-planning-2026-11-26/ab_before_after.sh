#!/bin/bash
# before (main's code) / after (this branch) alternated, same table, same command
cd /work/wt/mdt-planning
for round in 1 2 3; do
  for side in before after; do
    if [ $side = before ]; then code=/tmp/mdtp-me/base; else code=/work/wt/mdt-planning; fi
    echo "== round $round $side $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    PYTHONPATH=$code /work/main/.venv/bin/python $code/benchmarks/metadata_table_planning.py --table /tmp/mdtp-me/t --runs 5 | grep -E '"median|ratio'
  done
done
