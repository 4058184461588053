#!/usr/bin/env bash
# The no-orphan tests (a raise in rank 1 under `fleetlab launch` and under our JAX launcher), N times in a row while
# a busy loop keeps one core loaded, as on a busy CI machine. Usage: bash scripts/dev/stress_no_orphans.sh [N=10]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bash scripts/dev/bootstrap.sh
export GIT_PYTHON_REFRESH=quiet JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
sh -c 'while :; do :; done' &
load=$!
trap 'kill $load' EXIT
for i in $(seq 1 "${1:-10}"); do
  .venv/bin/python -m pytest tests/test_launch.py -k raise_in_rank -q -p no:cacheprovider 2>&1 | tail -1 | sed "s/^/run $i: /"
done
