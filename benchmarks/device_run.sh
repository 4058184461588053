#!/usr/bin/env bash
# What we run on the GPU machine (device tool), from the repo root:  bash benchmarks/device_run.sh [smoke|full]
# Needs the wheels from ../shared/tools/device-wheels carried as .whl. Writes everything under $OUT.
set -u
mode=${1:-full}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 GIT_PYTHON_REFRESH=quiet
export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache
S=scripts/reinforcement_learning
its=150; [ "$mode" = smoke ] && its=3
python3 -m pip list 2>/dev/null | grep -iE "^(torch|jax|jaxlib|mujoco|mujoco-mjx|rsl-rl-lib|rl-games|skrl|flax|optax) " > "$OUT/versions.txt"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; python3 -c "import torch, jax; print('torch', torch.__version__, 'jax', jax.__version__, jax.devices())"; git rev-parse HEAD 2>/dev/null; } > "$OUT/machine.txt" 2>&1
run() {  # name, timeout, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "{\"name\": \"$name\", \"rc\": $rc, \"wall_s\": $((SECONDS - t0))}" >> "$OUT/steps.jsonl"
  tail -3 "$OUT/$name.log"
}
case "$mode" in smoke|part1|full) ;; part2) ;; *) echo "mode: smoke|part1|part2|full"; exit 2;; esac
if [ "$mode" != part2 ]; then
  run bench_env_torch 300 python3 -m fleetlab bench env --task Isaac-Cartpole-v0 --num_envs 4096 65536 --device cuda:0 --steps 200 --repeats 5 --breakdown --json "$OUT/bench_env_torch.json"
  run bench_env_jax 200 python3 -m fleetlab bench env --task Isaac-Cartpole-v0 --num_envs 4096 65536 --device cuda:0 --steps 200 --repeats 5 --view jax --json "$OUT/bench_env_jax.json"
  run rsl_rl 300 python3 -m torch.distributed.run --nnodes=1 --nproc_per_node=1 $S/rsl_rl/train.py --task=Isaac-Cartpole-v0 --headless --distributed --max_iterations $its
  run rsl_rl_play 200 python3 $S/rsl_rl/play.py --task=Isaac-Cartpole-v0 --headless --num_envs 32
  run rl_games 300 python3 -m torch.distributed.run --nnodes=1 --nproc_per_node=1 $S/rl_games/train.py --task=Isaac-Cartpole-v0 --headless --distributed --max_iterations $its
fi
if [ "$mode" != part1 ]; then
  run skrl_torch 300 python3 -m torch.distributed.run --nnodes=1 --nproc_per_node=1 $S/skrl/train.py --task=Isaac-Cartpole-v0 --headless --distributed --max_iterations $its
  run skrl_jax 400 python3 -m fleetlab.distributed.jax_launch --nnodes=1 --nproc_per_node=1 --coordinator_address=127.0.0.1:5555 $S/skrl/train.py --task=Isaac-Cartpole-v0 --headless --distributed --ml_framework jax --max_iterations $its
fi
# One results file (the device tool brings back only a few files): steps, bench JSONs, every run's summary/play.
python3 - "$OUT" "$mode" <<'PY'
import glob, json, os, sys
out, mode = sys.argv[1], sys.argv[2]
res = {"mode": mode, "machine": open(f"{out}/machine.txt").read(), "versions": open(f"{out}/versions.txt").read(),
       "steps": [json.loads(l) for l in open(f"{out}/steps.jsonl")], "bench": {}, "runs": {}}
for f in glob.glob(f"{out}/bench_*.json"):
    res["bench"][os.path.basename(f)] = json.load(open(f))
for f in glob.glob("logs/**/summary.json", recursive=True) + glob.glob("logs/**/play.json", recursive=True):
    res["runs"][f] = json.load(open(f))
json.dump(res, open(f"{out}/results_{mode}.json", "w"), indent=1)
PY
rm -f "$OUT/steps.jsonl" "$OUT/versions.txt"
