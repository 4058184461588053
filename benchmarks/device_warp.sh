#!/usr/bin/env bash
# Issue B on the H200 (device tool), from the repo root, after the warp-lang install of ../shared/tools/device-warp:
#   bash benchmarks/device_warp.sh COMMIT
# `fleetlab bench env` for Ant and Humanoid with both MJX implementations in the same run (4096 and 16384 envs,
# cold JIT: an empty JAX cache and an empty Warp kernel cache), then the 65.5M-step Humanoid training with rsl_rl on
# Warp (benchmarks/device_tasks.py, 125 iterations x 32 steps x 16384 envs). Writes under $OUT.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/site_warp:$PWD/src PYTHONUNBUFFERED=1 GIT_PYTHON_REFRESH=quiet
export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache_$$ WARP_CACHE_PATH=/tmp/warpcache_$$
{ date -u; echo "commit ${1:-unknown}"; echo "command: bash benchmarks/device_warp.sh"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, jax, mujoco, warp; print('torch', torch.__version__, 'jax', jax.__version__, 'mujoco', mujoco.__version__, 'warp', warp.__version__)"; } > "$OUT/machine.txt" 2>&1
log="$OUT/device_warp.log"
for task in Ant Humanoid; do
  for impl in warp jax; do
    timeout 120 python3 -m fleetlab bench env --task Isaac-$task-v0 --num_envs 4096 16384 --device cuda:0 --steps 100 \
      --repeats 3 --physics_impl $impl --json "$OUT/bench_env_${task,,}_$impl.json" >> "$log" 2>&1
    echo "bench env $task $impl rc $?" | tee -a "$log"
  done
done
grep -E "env-steps/s" "$log"
PHYSICS_IMPL=warp BUDGET_S=${TRAIN_BUDGET_S:-200} timeout 260 python3 benchmarks/device_tasks.py "${1:-unknown}" "Humanoid-v0 rsl_rl" >> "$log" 2>&1
echo "train rc $?" | tee -a "$log"
tail -5 "$log" | cut -c1-400
