#!/usr/bin/env bash
# Issue B on the H200 (device tool), from the repo root, after the warp-lang install of ../shared/tools/device-warp:
#   bash benchmarks/device_warp.sh COMMIT STAGE...
# Stages (each writes under $OUT; one device call can hold a few):
#   env       `fleetlab bench env` for Ant and Humanoid with both MJX implementations (4096 and 16384 envs)
#   compile   the cold first step on Warp: every run on an empty Warp kernel cache and an empty JAX cache.
#             Humanoid with the step modules compiled ahead in parallel (the default), with no preload and with
#             every module preloaded; then Ant and Cartpole with the default. The caches are merged into
#             /tmp/warpcache afterwards, which later stages use.
#   train     `fleetlab bench train` (rsl_rl) for Ant and Humanoid, both implementations, 4096 and 16384 envs
#   TASK:LIB  a full training run from benchmarks/device_tasks.py, e.g. Humanoid-v0:rl_games
#   go1=V,... Go1 flat trained for Isaac Lab's budget and played, per variant of benchmarks/device_go1.py
#   benchgo1  `fleetlab bench train` (rsl_rl) for the Go1, both implementations, 4096 and 16384 envs
#   roughpair   issue I: `fleetlab bench env` Go1 flat vs rough (4096, 16384 envs) on ROUGH_IMPL (default warp);
#               ROUGH_TRAIN=1 adds `bench train` (rsl_rl, 4096 envs) for both
#   braxbench   issue D: `fleetlab bench train --libraries brax rsl_rl` for Cartpole at 4096 and 16384 envs
#   braxcartpole  issue D: brax trains Cartpole for 150 iterations at 4096 envs, then plays 1000 steps
#   braxhumanoid  issue D: brax trains the Humanoid on Warp for 65.5M steps (16384 envs x 32 x 125), whole
#               process timed, after a short run that fills Warp's kernel cache
#   scaling     issue G: weak scaling of the Humanoid on Warp, `fleetlab bench train` at 1, 2, 4 and 8 processes (one
#               GPU each, up to the GPUs there are), 4096 envs per GPU, for the libraries in SCALING_LIBS (default
#               all four; one call may not hold them all); each row says whether the ranks' checksums are identical
#   go1all      issue G: the Go1 flat task with rsl_rl on every GPU (`fleetlab launch`), Isaac Lab's 300 iterations,
#               then play (benchmarks/device_go1.py with NPROC)
#   envpair     issue H: `fleetlab bench env` (4096 envs, Warp) for the Go1 and the Humanoid, this tree against
#               BASE_SRC's code (default .device_base, carried), alternated, ENVPAIR_REPS pairs (default 3), each run on
#               an empty JAX compilation cache (so compile_s is the first step's whole XLA compile) and a Warp kernel
#               cache filled by a warm-up first (ENVPAIR_TASKS: the task names without Isaac-/-v0)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
COMMIT=${1:-unknown}
shift
# the wheels of ../shared/tools/device-wheels, in .whl/ or split over .whl*/ folders carried by separate calls
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl*/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/site_warp:$PWD/src PYTHONUNBUFFERED=1 GIT_PYTHON_REFRESH=quiet
export WARP_CACHE_PATH=/tmp/warpcache JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache_$$
{ date -u; echo "commit $COMMIT"; echo "command: bash benchmarks/device_warp.sh $COMMIT $*"; nproc
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, jax, mujoco, warp; print('torch', torch.__version__, 'jax', jax.__version__, 'mujoco', mujoco.__version__, 'warp', warp.__version__)"; } > "$OUT/machine.txt" 2>&1
log="$OUT/device_warp.log"

cold_step() {  # NAME TASK PRELOAD: one bench env run on empty caches; Warp's per-module load lines go to the log
  local dir=/tmp/cold_$1
  rm -rf "$dir" && mkdir -p "$dir"
  WARP_CACHE_PATH=$dir/warp JAX_COMPILATION_CACHE_DIR=$dir/jax timeout 300 \
    python3 -m fleetlab bench env --task Isaac-$2-v0 --num_envs 4096 --device cuda:0 --steps 50 --repeats 3 \
    --physics_impl warp --physics_preload "${3:-step}" --json "$OUT/cold_$1.json" > "$OUT/cold_$1.log" 2>&1
  echo "cold $1 rc $?" | tee -a "$log"
}

timed_run() {  # NAME GUARD_S FLEETLAB_ARGS...: one whole process timed from its start, in /tmp/runs/NAME;
  # writes $OUT/NAME.log and $OUT/NAME_summary.json
  local name=$1 guard=$2 dir=/tmp/runs/$1 t0 t1
  shift 2
  rm -rf "$dir" && mkdir -p "$dir"
  t0=$(date +%s.%N)
  (cd "$dir" && timeout "$guard" python3 -m fleetlab "$@" --headless --device cuda:0 > "$OUT/$name.log" 2>&1)
  local rc=$?
  t1=$(date +%s.%N)
  echo "$name rc $rc whole process $(python3 -c "print(round($t1 - $t0, 1))") s: fleetlab $*" | tee -a "$log"
  cp "$(find "$dir/logs" -name summary.json | head -1)" "$OUT/${name}_summary.json" 2>/dev/null
  grep -E "^it " "$OUT/$name.log" | tail -3 | tee -a "$log"
}

warp_warmup() {  # NAME [NUM_ENVS]: a short Humanoid `bench env` run that fills Warp's kernel cache for later runs
  timeout 120 python3 -m fleetlab bench env --task Isaac-Humanoid-v0 --num_envs "${2:-16384}" --device cuda:0 --steps 5 \
    --repeats 1 --physics_impl warp > "$OUT/${1}_warmup.log" 2>&1
  echo "warp cache warm-up rc $?" | tee -a "$log"
}

summaries() {  # SUMMARY_JSON...: one line each into the log: where a brax run's time went, its speed and return
  python3 - "$@" <<'PY' | tee -a "$log"
import json, statistics, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    f, p = d["final"], d["perf"]
    ends = f.get("epoch_end_s") or [None]
    print(path.split("/")[-1], {k: f.get(k) for k in ("xla_compile_s", "jax_trace_s", "learn_start_s", "jax_backend_compiles")},
          "startup", p["startup_s"], "process", p["process_s"], "epochs", [round(x, 1) for x in ends[:3] if x], ends[-1],
          "ret", f.get("Train/mean_reward"), f.get("Train/mean_reward_last_iteration"), "fps", p["train_fps"],
          "median epoch sps", statistics.median(f["epoch_sps"][1:] or f["epoch_sps"]) if f.get("epoch_sps") else None)
PY
}

for stage in "$@"; do
  case $stage in
    envpair)
      for task in ${ENVPAIR_TASKS:-Velocity-Flat-Unitree-Go1 Humanoid}; do
        timeout 200 python3 -m fleetlab bench env --task Isaac-$task-v0 --num_envs 4096 --device cuda:0 --steps 5 \
          --repeats 1 --physics_impl warp > "$OUT/envpair_${task}_warmup.log" 2>&1
        echo "warm-up $task rc $?" | tee -a "$log"
        for rep in $(seq 1 "${ENVPAIR_REPS:-3}"); do
          for code in base new; do
            src=$PWD/src && [ $code = base ] && src=$PWD/${BASE_SRC:-.device_base}/src
            rm -rf /tmp/jc_envpair && PYTHONPATH=/tmp/site:/tmp/site_warp:$src JAX_COMPILATION_CACHE_DIR=/tmp/jc_envpair \
              timeout 200 python3 -m fleetlab bench env --task Isaac-$task-v0 --num_envs 4096 --device cuda:0 \
              --steps 200 --repeats 5 --physics_impl warp --json "$OUT/envpair_${task}_${code}_$rep.json" \
              > "$OUT/envpair_${task}_${code}_$rep.log" 2>&1
            echo "envpair $task $code $rep rc $? $(grep -h "env-steps/s" "$OUT/envpair_${task}_${code}_$rep.log" | tail -1)" | tee -a "$log"
          done
        done
      done ;;
    env)
      for task in Ant Humanoid; do
        for impl in warp jax; do
          timeout 150 python3 -m fleetlab bench env --task Isaac-$task-v0 --num_envs 4096 16384 --device cuda:0 \
            --steps 100 --repeats 3 --physics_impl $impl --json "$OUT/bench_env_${task,,}_$impl.json" >> "$log" 2>&1
          echo "bench env $task $impl rc $?" | tee -a "$log"
        done
      done ;;
    compile)
      cold_step humanoid_default Humanoid ""
      cold_step humanoid_none Humanoid none
      cold_step humanoid_all Humanoid all
      cold_step ant_default Ant ""
      cold_step cartpole_default Cartpole ""
      mkdir -p /tmp/warpcache && for d in /tmp/cold_*/warp; do cp -rn "$d"/. /tmp/warpcache/; done
      grep -h "env-steps/s" "$OUT"/cold_*.log ;;
    train)
      for task in Ant Humanoid; do
        timeout 290 python3 -m fleetlab bench train --task Isaac-$task-v0 --libraries rsl_rl --num_envs 4096 16384 \
          --iterations 20 --device cuda:0 --physics_impl warp jax --out "$OUT/bench_train_${task,,}" >> "$log" 2>&1
        echo "bench train $task rc $?" | tee -a "$log"
      done ;;
    go1=*)
      IFS=, read -ra variants <<< "${stage#go1=}"
      timeout 590 python3 benchmarks/device_go1.py "$COMMIT" "${variants[@]}" >> "$log" 2>&1
      echo "go1 $stage rc $?" | tee -a "$log" ;;
    benchgo1)
      timeout 290 python3 -m fleetlab bench train --task Isaac-Velocity-Flat-Unitree-Go1-v0 --libraries rsl_rl \
        --num_envs 4096 16384 --iterations 20 --device cuda:0 --physics_impl warp jax --out "$OUT/bench_train_go1" >> "$log" 2>&1
      echo "bench train Go1 rc $?" | tee -a "$log" ;;
    roughpair)
      # issue I: a Go1 rough env step against a flat one, same process settings, ROUGH_IMPL (default warp), 4096 and
      # 16384 envs; then ROUGH_TRAIN=1 adds `bench train` (rsl_rl, 4096 envs) for both tasks
      for task in Flat Rough; do
        timeout "${ROUGH_GUARD:-150}" python3 -m fleetlab bench env --task Isaac-Velocity-$task-Unitree-Go1-v0 \
          --num_envs 4096 16384 --device cuda:0 --steps 100 --repeats 3 --physics_impl "${ROUGH_IMPL:-warp}" \
          --json "$OUT/bench_env_go1_$task.json" >> "$log" 2>&1
        echo "bench env Go1 $task rc $?" | tee -a "$log"
      done
      if [ "${ROUGH_TRAIN:-0}" = 1 ]; then
        for task in Flat Rough; do
          timeout 150 python3 -m fleetlab bench train --task Isaac-Velocity-$task-Unitree-Go1-v0 --libraries rsl_rl \
            --num_envs 4096 --iterations 10 --device cuda:0 --physics_impl "${ROUGH_IMPL:-warp}" \
            --out "$OUT/bench_train_go1_$task" >> "$log" 2>&1
          echo "bench train Go1 $task rc $?" | tee -a "$log"
        done
      fi ;;
    braxbench)
      timeout 500 python3 -m fleetlab bench train --task Isaac-Cartpole-v0 --libraries brax rsl_rl --num_envs 4096 16384 \
        --iterations 50 --device cuda:0 --physics_impl jax --out "$OUT/bench_train_cartpole_brax" >> "$log" 2>&1
      echo "bench train brax rc $?" | tee -a "$log" ;;
    braxcartpole)
      timed_run brax_cartpole 200 train --library brax --task Isaac-Cartpole-v0 --num_envs 4096 --max_iterations 150
      (cd /tmp/runs/brax_cartpole && timeout 150 python3 -m fleetlab play --library brax --task Isaac-Cartpole-v0 \
        --num_envs 64 --steps 1000 --headless --device cuda:0 > "$OUT/brax_cartpole_play.log" 2>&1
       echo "play rc $?" | tee -a "$log"; cp "$(find logs -name play.json | head -1)" "$OUT/brax_cartpole_play.json") ;;
    braxhumanoid)
      warp_warmup brax_humanoid
      timed_run brax_humanoid 200 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --max_iterations 125 \
        --physics_impl warp ;;
    scaling)
      warp_warmup scaling 4096
      gpus=$(nvidia-smi --list-gpus | wc -l)
      nprocs=$(for n in 1 2 4 8; do [ $n -le $gpus ] && echo $n; done)
      libs=${SCALING_LIBS:-rsl_rl rl_games skrl brax}
      timeout "${SCALING_GUARD_S:-540}" python3 -m fleetlab bench train --task Isaac-Humanoid-v0 --physics_impl warp \
        --libraries $libs --num_envs 4096 --nproc $nprocs --iterations "${SCALING_ITS:-20}" --device cuda \
        --out "$OUT/scaling_${libs// /_}" >> "$log" 2>&1
      rc=$? && echo "scaling ($libs at $(echo $nprocs) processes) rc $rc" | tee -a "$log"
      grep -h "^\[bench\]" "$log" | tail -20 ;;
    go1all)
      NPROC=$(nvidia-smi --list-gpus | wc -l) python3 benchmarks/device_go1.py "$COMMIT" rsl_rl 2>&1 | tee -a "$log" ;;
    *) echo "unknown stage $stage" | tee -a "$log" ;;
  esac
done
tail -5 "$log" | cut -c1-400
