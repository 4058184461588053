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
#   braxbench   issue D: `fleetlab bench train --libraries brax rsl_rl` for Cartpole at 4096 and 16384 envs
#   braxcartpole  issue D: brax trains Cartpole for 150 iterations at 4096 envs, then plays 1000 steps
#   humprobe    issue D: the Warp Humanoid step per variant (body forces, buffer sizes, graph mode), env and brax
#   braxtime    issue D: where the Humanoid's whole-process time goes (timeline, compile seconds, imports, variants)
#   braxwarm    issue D: the Humanoid's first and second run on one JAX compilation cache
#   braxprofile issue D: the GPU time of 5 steady brax Humanoid iterations, per kernel
#   braxhumanoid  issue D: brax trains the Humanoid on Warp for 65.5M steps (16384 envs x 32 x 125), whole
#               process timed, after a short run that fills Warp's kernel cache
#   braxcartflag  issue D: brax Cartpole (4096 envs, 100 iterations, Warp) with XLA's Triton GEMMs off and on
#   braxcarry   issue D: the brax Humanoid of this tree against BASE_SRC's code (a `git archive BASE src`
#               unpacked in a folder carried along), 30 iterations each on an empty JAX cache; XLA's Triton GEMMs
#               off; then the first and second full run and a profile
#   braxnotorch issue D: which GPU count a JAX workflow's device resolution finds (the CUDA driver, no torch) and
#               where a brax run with no --device trains; then the full brax Humanoid of this tree and of BASE_SRC's
#               code, alternated, first, second and third run, each code on its own JAX cache (NOTORCH_RUNS picks
#               the runs, NOTORCH_CODES="new" leaves the older code out, NOTORCH_CART=0 the Cartpole)
#   braxpair    issue D: one brax Humanoid run of this tree on cold caches (a short device session's braxnotorch)
#   braxreturn  issue D: rsl_rl's Humanoid on the same budget (RET_RUNS names the runs; "" none), then every Humanoid run in
#               /tmp/runs (this stage's, braxnotorch's, braxpair's) plays 1000 steps at 4096 envs: one episode per env
#               cut at step 1000 and one more after each fall, the same return measure for both libraries
#   scaling     issue G: weak scaling of the Humanoid on Warp, `fleetlab bench train` at 1, 2, 4 and 8 processes (one
#               GPU each, up to the GPUs there are), 4096 envs per GPU, for the libraries in SCALING_LIBS (default
#               all four; one call may not hold them all); each row says whether the ranks' checksums are identical
#   go1all      issue G: the Go1 flat task with rsl_rl on every GPU (`fleetlab launch`), Isaac Lab's 300 iterations,
#               then play (benchmarks/device_go1.py with NPROC)
#   envpair     issue H: `fleetlab bench env` (4096 envs, Warp) for the Go1 and the Humanoid, this tree against
#               BASE_SRC's code (default .device_base, carried), alternated, ENVPAIR_REPS pairs (default 3), each run on
#               an empty JAX compilation cache (so compile_s is the first step's whole XLA compile) and a Warp kernel
#               cache filled by a warm-up first (ENVPAIR_TASKS: the task names without Isaac-/-v0)
#   braxgil     issue D: torch's background import beside epochs 2-3, this tree against BASE_SRC's code: the GIL
#               probe (benchmarks/torch_import_gil.py), then brax Humanoid runs of 25 iterations (5 epochs) on one
#               JAX cache filled by a first run, GIL_PAIRS pairs alternated (GIL_PROBES probes of each mode first)
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
  FLEETLAB_WARP_PRELOAD=$3 WARP_CACHE_PATH=$dir/warp JAX_COMPILATION_CACHE_DIR=$dir/jax timeout 300 \
    python3 -m fleetlab bench env --task Isaac-$2-v0 --num_envs 4096 --device cuda:0 --steps 50 --repeats 3 \
    --physics_impl warp --json "$OUT/cold_$1.json" > "$OUT/cold_$1.log" 2>&1
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
    preload)  # the default preload on an empty cache; then whether kernels compiled at 64 envs serve 4096 envs
      cold_step humanoid_default Humanoid ""
      rm -rf /tmp/nworld && FLEETLAB_WARP_PRELOAD=none WARP_CACHE_PATH=/tmp/nworld timeout 200 python3 -m fleetlab bench env \
        --task Isaac-Cartpole-v0 --num_envs 64 --device cuda:0 --steps 5 --repeats 1 --physics_impl warp > "$OUT/nworld_64.log" 2>&1
      FLEETLAB_WARP_PRELOAD=none WARP_CACHE_PATH=/tmp/nworld timeout 200 python3 -m fleetlab bench env --task Isaac-Cartpole-v0 \
        --num_envs 4096 --device cuda:0 --steps 5 --repeats 1 --physics_impl warp > "$OUT/nworld_4096.log" 2>&1
      echo "compiled at 64 envs: $(grep -c '(compiled)' "$OUT/nworld_64.log"), then at 4096: $(grep -c '(compiled)' "$OUT/nworld_4096.log")" | tee -a "$log"
      grep -h "env-steps/s" "$OUT"/cold_*.log "$OUT"/nworld_*.log ;;
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
    humprobe)  # issue D: what a Warp Humanoid env step costs at 16384 and 32768 envs, per variant (NAME VAR=VALUE...):
      # body forces in every substep (as before 2026-12-04) or the last only, buffer sizes, the graph mode; then
      # brax for 30 iterations with the variants that matter
      small="FLEETLAB_WARP_CONTACTS_PER_ENV=16 FLEETLAB_WARP_CONSTRAINTS_PER_ENV=128"
      for v in "rne_every FLEETLAB_WARP_RNE_EVERY_SUBSTEP=1" "last_only" "small $small" \
               "small_graph_warp $small FLEETLAB_WARP_GRAPH_MODE=WARP"; do
        read -ra kv <<< "$v"
        env "${kv[@]:1}" timeout 120 python3 -m fleetlab bench env --task Isaac-Humanoid-v0 --num_envs 16384 32768 \
          --device cuda:0 --steps 50 --repeats 3 --physics_impl warp --json "$OUT/humprobe_${kv[0]}.json" > "$OUT/humprobe_${kv[0]}.log" 2>&1
        echo "humprobe ${kv[0]} rc $?: $(grep -h 'env-steps/s' "$OUT/humprobe_${kv[0]}.log" | tr '\n' ' ')" | tee -a "$log"
      done
      for v in "rne_every FLEETLAB_WARP_RNE_EVERY_SUBSTEP=1" "small $small" "small_graph_warp $small FLEETLAB_WARP_GRAPH_MODE=WARP"; do
        read -ra kv <<< "$v"
        export "${kv[@]:1}"
        timed_run "humprobe_brax_${kv[0]}" 150 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 \
          --max_iterations 30 --physics_impl warp
        unset FLEETLAB_WARP_RNE_EVERY_SUBSTEP FLEETLAB_WARP_CONTACTS_PER_ENV FLEETLAB_WARP_CONSTRAINTS_PER_ENV FLEETLAB_WARP_GRAPH_MODE
      done ;;
    braxprobe)  # where a brax Humanoid iteration goes: 30 iterations per variant of XLA's matmul settings
      timeout 120 python3 -m fleetlab bench env --task Isaac-Humanoid-v0 --num_envs 16384 32768 --device cuda:0 --steps 50 \
        --repeats 3 --physics_impl warp --json "$OUT/bench_env_humanoid_warp.json" > "$OUT/bench_env_humanoid_warp.log" 2>&1
      echo "bench env rc $?" | tee -a "$log"
      timed_run probe_default 150 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --max_iterations 30 --physics_impl warp
      JAX_DEFAULT_MATMUL_PRECISION=tensorfloat32 timed_run probe_tf32 150 train --library brax --task Isaac-Humanoid-v0 \
        --num_envs 16384 --max_iterations 30 --physics_impl warp
      timed_run probe_1epoch 150 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --max_iterations 30 \
        --physics_impl warp agent.ppo.num_updates_per_batch=1 ;;
    braxtime)  # issue D: where the brax Humanoid's whole-process time goes (summary.json's timeline and XLA
      # compile seconds; Python's import times), cold against warm JAX cache, XLA's autotuning off, 32768 envs
      warp_warmup braxtime
      python3 -X importtime -c "import fleetlab.rl.workflow, fleetlab.tasks, brax.training.agents.ppo.train" 2> "$OUT/braxtime_importtime.log"
      sort -t'|' -k2 -n "$OUT/braxtime_importtime.log" | tail -4 | tee -a "$log"
      export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache_bt
      timed_run braxtime_cold 200 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --max_iterations 125 --physics_impl warp
      timed_run braxtime_warm 200 train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --max_iterations 125 --physics_impl warp
      export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache_bt_noat
      XLA_FLAGS=--xla_gpu_autotune_level=0 timed_run braxtime_noautotune 200 train --library brax --task Isaac-Humanoid-v0 \
        --num_envs 16384 --max_iterations 125 --physics_impl warp
      timed_run braxtime_32k 150 train --library brax --task Isaac-Humanoid-v0 --num_envs 32768 --max_iterations 20 --physics_impl warp
      summaries "$OUT"/braxtime_*_summary.json
      (cd "$OUT" && tar czf braxtime.tgz braxtime_* && rm -f braxtime_*.log braxtime_*.json) ;;  # the tool fetches few files
    braxwarm)  # issue D: the brax Humanoid, 65.5M steps, run after run on one JAX compilation cache, empty at first (a
      # user's first, second, ... run of the task), after a short run that fills Warp's kernel cache. Knobs:
      # BRAX_ENVS (16384) x BRAX_ROLLOUT (32) steps x 65.5M / their product iterations; BRAX_RUNS (first second)
      envs=${BRAX_ENVS:-16384} rollout=${BRAX_ROLLOUT:-32}
      its=$((65536000 / envs / rollout)) tag=braxwarm_${envs}x${rollout}
      warp_warmup "$tag" "$envs"
      export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache_$tag
      for run in ${BRAX_RUNS:-first second}; do
        timed_run ${tag}_$run 200 train --library brax --task Isaac-Humanoid-v0 --num_envs "$envs" --max_iterations "$its" \
          --physics_impl warp agent.num_steps_per_env="$rollout"
        summaries "$OUT/${tag}_${run}_summary.json"
      done
      (cd "$OUT" && tar czf $tag.tgz ${tag}_* && rm -f ${tag}_*.log ${tag}_*.json) ;;
    braxcarry)
      warp_warmup braxcarry
      hum="train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp"
      JAX_COMPILATION_CACHE_DIR=/tmp/jc_new30 timed_run braxcarry_new30 150 $hum --max_iterations 30
      PYTHONPATH=/tmp/site:/tmp/site_warp:$PWD/${BASE_SRC:-.device_base}/src JAX_COMPILATION_CACHE_DIR=/tmp/jc_base30 \
        timed_run braxcarry_base30 150 $hum --max_iterations 30
      XLA_FLAGS=--xla_gpu_enable_triton_gemm=false JAX_COMPILATION_CACHE_DIR=/tmp/jc_notriton30 \
        timed_run braxcarry_notriton30 150 $hum --max_iterations 30
      for run in first second; do
        JAX_COMPILATION_CACHE_DIR=/tmp/jc_full timed_run braxcarry_$run 200 $hum --max_iterations 125
      done
      summaries "$OUT"/braxcarry_*_summary.json
      timeout 200 python3 benchmarks/brax_profile.py "$OUT" > "$OUT/brax_profile.log" 2>&1
      echo "brax profile rc $?" | tee -a "$log"
      tail -26 "$OUT/brax_profile.log" | cut -c1-200 | tee -a "$log"
      (cd "$OUT" && tar czf braxcarry.tgz braxcarry_* && rm -f braxcarry_*.log braxcarry_*.json) ;;
    braxnotorch)
      if [ "${NOTORCH_CART:-1}" = 1 ]; then  # NOTORCH_CART=0: the Humanoid runs only
        python3 -c "from fleetlab.distributed.context import _cuda_device_count as n; print('GPUs seen: jax', n('jax'), 'torch', n('torch'))" 2>&1 | tee -a "$log"
        rm -rf /tmp/runs/notorch_cart && mkdir -p /tmp/runs/notorch_cart
        (cd /tmp/runs/notorch_cart && timeout 150 python3 -m fleetlab train --library brax --task Isaac-Cartpole-v0 --num_envs 1024 \
          --max_iterations 5 --headless > "$OUT/notorch_cart.log" 2>&1)
        echo "brax Cartpole with no --device rc $?: $(grep -ho '"device": "[^"]*"' $(find /tmp/runs/notorch_cart -name summary.json) | head -1)" | tee -a "$log"
      fi
      warp_warmup braxnotorch
      hum="train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp --max_iterations 125"
      for run in ${NOTORCH_RUNS:-first second third}; do  # the order within a round alternates, against drifts of the host
        order="${NOTORCH_CODES:-new base}" && [ $run = second ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
        for code in $order; do
          src=$PWD/src && [ $code = base ] && src=$PWD/${BASE_SRC:-.device_base}/src
          PYTHONPATH=/tmp/site:/tmp/site_warp:$src JAX_COMPILATION_CACHE_DIR=/tmp/jc_notorch_$code \
            timed_run notorch_${code}_$run 200 $hum
        done
      done
      summaries "$OUT"/notorch_*_summary.json
      (cd "$OUT" && tar czf braxnotorch.tgz notorch_* && rm -f notorch_*.log notorch_*.json) ;;
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
    braxgil)  # the epoch program is the same in both codes (only torch's import differs), so they share a JAX cache
      for i in $(seq "${GIL_PROBES:-2}"); do
        for mode in import freeze; do
          python3 benchmarks/torch_import_gil.py $mode --json "$OUT/gil_probe_${mode}_$i.json" 2>&1 | tail -1 | tee -a "$log"
        done
      done
      warp_warmup braxgil
      short="train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp --max_iterations 25"
      export JAX_COMPILATION_CACHE_DIR=/tmp/jc_gil
      timed_run gil_fill 200 $short
      for i in $(seq "${GIL_PAIRS:-4}"); do
        order="new base" && [ $((i % 2)) = 0 ] && order="base new"
        for code in $order; do
          src=$PWD/src && [ $code = base ] && src=$PWD/${BASE_SRC:-.device_base}/src
          PYTHONPATH=/tmp/site:/tmp/site_warp:$src timed_run gil_${code}_$i 120 $short
        done
      done
      summaries "$OUT"/gil_*_summary.json
      (cd "$OUT" && tar czf braxgil.tgz gil_* && rm -f gil_*.log gil_*.json) ;;
    braxpair)  # issue D: one brax Humanoid run of this tree, cold (no warm-up run first), for braxreturn to play
      PYTHONPATH=/tmp/site:/tmp/site_warp:$PWD/src timed_run notorch_new_pair 200 \
        train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp --max_iterations 125
      summaries "$OUT"/notorch_new_pair_summary.json ;;
    braxreturn)  # issue D: rsl_rl trains the Humanoid on the same budget (RET_RUNS times), then every Humanoid run left
      # in /tmp/runs (this stage's and braxnotorch's, same machine) plays 1000 steps at 4096 envs with the deterministic
      # policy. Play lengthens the episode past --steps, so each env plays one episode cut at step 1000 (and one more
      # after each fall): play's mean return over all of them is the same measure for both libraries
      for run in ${RET_RUNS-first}; do  # RET_RUNS="": play only
        timed_run ret_rsl_rl_$run 200 train --library rsl_rl --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp --max_iterations 125
      done
      for dir in /tmp/runs/ret_rsl_rl_* /tmp/runs/notorch_new_* /tmp/runs/notorch_base_*; do
        [ -d "$dir" ] || continue
        name=$(basename "$dir") && lib=brax && [ "${name#ret_rsl_rl}" != "$name" ] && lib=rsl_rl
        (cd "$dir" && timeout 120 python3 -m fleetlab play --library $lib --task Isaac-Humanoid-v0 --num_envs 4096 \
          --steps 1000 --physics_impl warp --headless --device cuda:0 --no-export > "$OUT/play_$name.log" 2>&1)
        rc=$? && cp "$(find "$dir/logs" -name play.json | head -1)" "$OUT/play_$name.json" 2>/dev/null
        echo "play $name ($lib) rc $rc: $(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print({k: d.get(k) for k in ('mean_return', 'episodes', 'terminated_fraction')})" "$OUT/play_$name.json" 2>&1 | tail -1)" | tee -a "$log"
      done
      (cd "$OUT" && tar czf braxreturn.tgz $(ls ret_* play_* 2>/dev/null) && rm -f ret_*.log ret_*.json play_*.log play_*.json) ;;
    braxgraph)  # issue D: brax Humanoid, 30 iterations, XLA's Triton GEMMs off, per MuJoCo Warp graph mode (WARP:
      # Warp's FFI handler runs Python on every call; JAX: XLA captures the call into its own CUDA graphs)
      warp_warmup braxgraph
      hum="train --library brax --task Isaac-Humanoid-v0 --num_envs 16384 --physics_impl warp --max_iterations 30"
      export XLA_FLAGS=--xla_gpu_enable_triton_gemm=false
      JAX_COMPILATION_CACHE_DIR=/tmp/jc_gw timed_run braxgraph_warp 150 $hum
      FLEETLAB_WARP_GRAPH_MODE=JAX JAX_COMPILATION_CACHE_DIR=/tmp/jc_gj timed_run braxgraph_jax 150 $hum
      XLA_FLAGS="$XLA_FLAGS --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,WHILE,CONDITIONAL" \
        FLEETLAB_WARP_GRAPH_MODE=JAX JAX_COMPILATION_CACHE_DIR=/tmp/jc_gjw timed_run braxgraph_jax_while 150 $hum
      unset XLA_FLAGS
      summaries "$OUT"/braxgraph_*_summary.json
      (cd "$OUT" && tar czf braxgraph.tgz braxgraph_* && rm -f braxgraph_*.log braxgraph_*.json) ;;
    braxcartflag)
      cart="train --library brax --task Isaac-Cartpole-v0 --num_envs 4096 --max_iterations 100"
      JAX_COMPILATION_CACHE_DIR=/tmp/jc_cart_off timed_run braxcart_triton_off 150 $cart
      XLA_FLAGS=--xla_gpu_enable_triton_gemm=true JAX_COMPILATION_CACHE_DIR=/tmp/jc_cart_on timed_run braxcart_triton_on 150 $cart
      summaries "$OUT"/braxcart_*_summary.json
      (cd "$OUT" && tar czf braxcart.tgz braxcart_* && rm -f braxcart_*.log braxcart_*.json) ;;
    braxprofile)  # issue D: the GPU time of 5 steady brax Humanoid iterations per kernel (benchmarks/brax_profile.py)
      timeout 300 python3 benchmarks/brax_profile.py "$OUT" > "$OUT/brax_profile.log" 2>&1
      echo "brax profile rc $?" | tee -a "$log"
      tail -26 "$OUT/brax_profile.log" | cut -c1-200 | tee -a "$log" ;;
    humrows)  # issue D: the Warp Humanoid step at 128, 96 and 80 constraint rows per env (the bound is 77), then
      # where a process's start-up goes (benchmarks/startup_probe.py)
      for rows in 128 96 80; do
        FLEETLAB_WARP_CONSTRAINTS_PER_ENV=$rows timeout 120 python3 -m fleetlab bench env --task Isaac-Humanoid-v0 \
          --num_envs 16384 --device cuda:0 --steps 50 --repeats 3 --physics_impl warp --json "$OUT/humrows_$rows.json" \
          > "$OUT/humrows_$rows.log" 2>&1
        echo "humrows $rows rc $?: $(grep -h 'env-steps/s' "$OUT/humrows_$rows.log" | tr '\n' ' ')" | tee -a "$log"
      done
      timeout 120 python3 benchmarks/startup_probe.py "$OUT" > "$OUT/startup_probe.log" 2>&1
      echo "startup probe rc $?: $(tail -1 "$OUT/startup_probe.log")" | tee -a "$log"
      (cd "$OUT" && tar czf humrows.tgz humrows_* startup_probe.* && rm -f humrows_*.log humrows_*.json startup_probe.*) ;;
    *:*)
      PHYSICS_IMPL=${PHYSICS_IMPL:-warp} timeout 590 python3 benchmarks/device_tasks.py "$COMMIT" "${stage%%:*} ${stage#*:}" >> "$log" 2>&1
      echo "train $stage rc $?" | tee -a "$log" ;;
    *) echo "unknown stage $stage" | tee -a "$log" ;;
  esac
done
tail -5 "$log" | cut -c1-400
