#!/usr/bin/env bash
# `make test` RUNS times in a row while HOGS busy loops (`yes > /dev/null`) share the cores.
# Prints each run's verdict and wall time; exits 1 when any run failed.
set -uo pipefail
runs=${1:-10}
hogs=${2:-4}
cd "$(dirname "$0")/.."
pids=()
for _ in $(seq "$hogs"); do yes > /dev/null & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
failed=0
for i in $(seq "$runs"); do
  start=$SECONDS
  if make -s test > "/tmp/compliance-bake-stress-$i.log" 2>&1; then verdict=pass; else verdict=FAIL; failed=$((failed + 1)); fi
  printf 'run %2d/%d: %s in %d s (log /tmp/compliance-bake-stress-%d.log)\n' \
    "$i" "$runs" "$verdict" "$((SECONDS - start))" "$i"
done
echo "$((runs - failed))/$runs runs passed with $hogs CPU hogs beside them"
[ "$failed" -eq 0 ]
