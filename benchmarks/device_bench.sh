#!/usr/bin/env bash
# Issue F on the H200 (device tool), from the repo root:  bash benchmarks/device_bench.sh COMMIT
# Profiles rsl_rl (benchmarks/profile_rsl_rl.py), runs `fleetlab bench train` for Cartpole at 4096 and 16384 envs
# (every library + the pure-torch baseline) and `fleetlab bench env` for Ant and Humanoid. Writes under $OUT.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 GIT_PYTHON_REFRESH=quiet JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache
{ date -u; echo "commit ${1:-unknown}"; echo "command: bash benchmarks/device_bench.sh"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, jax, mujoco; print('torch', torch.__version__, 'jax', jax.__version__, 'mujoco', mujoco.__version__)"; } > "$OUT/machine.txt" 2>&1
log="$OUT/device_bench.log"
for task in Ant Humanoid; do
  timeout 150 python3 -m fleetlab bench env --task Isaac-$task-v0 --num_envs 4096 16384 --device cuda:0 --steps 100 \
    --repeats 3 --json "$OUT/bench_env_${task,,}.json" >> "$log" 2>&1; echo "bench env $task rc $?" | tee -a "$log"
done
timeout 150 python3 benchmarks/profile_rsl_rl.py --num_envs 4096 --device cuda:0 --json "$OUT/profile_rsl_rl.json" >> "$log" 2>&1
echo "profile rc $?" | tee -a "$log"
timeout 330 python3 -m fleetlab bench train --num_envs 4096 16384 --iterations 20 --device cuda --out "$OUT/bench_train" >> "$log" 2>&1
echo "bench train rc $?" | tee -a "$log"
grep -E "^\[bench\]|^\{" "$log" | cut -c1-400
