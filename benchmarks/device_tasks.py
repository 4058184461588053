"""Issue G on the H200 (device tool): train Ant and Humanoid with rsl_rl, rl_games and skrl (torch), each for a
fixed number of iterations under a wall-clock guard (SIGTERM, which our runners turn into a checkpoint and a
clean stop), and record each run's return curve (from its TensorBoard events), wall time and FPS.

    python3 benchmarks/device_tasks.py COMMIT [REGEX over "task library"]
    (after the .whl install line, as in device_bench.sh)

Writes $OUT/tasks_h200.json."""

import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

OUT = os.environ.get("OUT", "/tmp/out")
NUM_ENVS = int(os.environ.get("NUM_ENVS", 16384))
DEVICE = os.environ.get("DEVICE", "cuda:0")
MAX_ITERATIONS = int(os.environ.get("MAX_ITERATIONS", 10**9))  # a CPU dry run sets a small one
PHYSICS_IMPL = os.environ.get("PHYSICS_IMPL", "auto")  # auto: MuJoCo Warp on the GPU when warp-lang is installed
# (task, library, iterations, guard s). Humanoid: 125 iterations x 32 steps x 16384 envs = 65.5M steps, Isaac
# Lab's Humanoid benchmark; Ant: 150 x 16 or 32 steps. Sized from the H200 env bench (Humanoid 18 ms, Ant 12 ms
# per step at 16384 envs); one device call per task (`python3 benchmarks/device_tasks.py COMMIT Humanoid`).
RUNS = [
    ("Isaac-Humanoid-v0", "rsl_rl", 125, 200),
    ("Isaac-Humanoid-v0", "rl_games", 125, 170),
    ("Isaac-Humanoid-v0", "skrl", 125, 150),
    ("Isaac-Ant-v0", "rsl_rl", 150, 100),
    ("Isaac-Ant-v0", "rl_games", 150, 100),
    ("Isaac-Ant-v0", "skrl", 150, 100),
]
# the mean episode return each library logs
RETURN_TAG = {"rsl_rl": "Train/mean_reward", "rl_games": "rewards/iter", "skrl": "Reward / Total reward (mean)"}
START = time.time()
DEADLINE = START + float(os.environ.get("BUDGET_S", 560))


def curves(run_root: str) -> dict:
    """Every scalar whose tag names a reward, a return, an episode length or the FPS: (step, wall s, value),
    thinned to at most 100 points."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = {}
    for events in glob.glob(os.path.join(run_root, "**", "events.out.tfevents.*"), recursive=True):
        acc = EventAccumulator(events, size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            low = tag.lower()
            if not any(k in low for k in ("reward", "return", "length", "fps")):
                continue
            points = acc.Scalars(tag)
            t0 = points[0].wall_time if points else 0
            stride = max(1, len(points) // 100)
            out[tag] = [(p.step, round(p.wall_time - t0, 2), p.value) for p in points[::stride] + points[-1:]]
    return out


def run_results(cwd: str) -> dict:
    """What a finished (or stopped) training run under `cwd` left: summary.json's wall time, last metrics,
    figures, world size and whether the ranks' checksums agree, and the return curves from its TensorBoard events."""
    out = {}
    summaries = glob.glob(os.path.join(cwd, "logs", "**", "summary.json"), recursive=True)
    if summaries:
        with open(summaries[0]) as f:
            s = json.load(f)
        out.update(train_wall_s=s["wall_s"], final=s["final"], perf=s["perf"], world_size=s["world_size"],
                   checksums_identical=s["checksums_identical"])
    out["curves"] = curves(os.path.join(cwd, "logs"))
    return out


def run(task: str, library: str, iterations: int, guard_s: float) -> dict:
    cwd = f"/tmp/runs/{task}_{library}"
    os.makedirs(cwd, exist_ok=True)
    cmd = [sys.executable, "-m", "fleetlab", "train", "--library", library, "--task", task, "--headless",
           "--num_envs", str(NUM_ENVS), "--max_iterations", str(min(iterations, MAX_ITERATIONS)), "--device", DEVICE,
           "--physics_impl", PHYSICS_IMPL]
    guard = max(10.0, min(guard_s, DEADLINE - time.time() - 25))
    t0 = time.time()
    with open(os.path.join(cwd, "console.log"), "w") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=guard)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)  # graceful: checkpoint, then exit 143
            try:
                rc = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
    row = {"task": task, "library": library, "num_envs": NUM_ENVS, "iterations_asked": iterations, "rc": rc,
           "stopped_by_guard": rc in (143, -15, -9), "guard_s": guard, "wall_s": round(time.time() - t0, 1),
           "command": " ".join(cmd[1:])}
    row.update(run_results(cwd))
    with open(os.path.join(cwd, "console.log")) as f:
        row["console_tail"] = f.read()[-1500:]
    return row


def _device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    results = {"commit": sys.argv[1] if len(sys.argv) > 1 else None, "num_envs": NUM_ENVS,
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "command": "python3 benchmarks/device_tasks.py", "device": _device_name(), "runs": []}
    pattern = re.compile(sys.argv[2] if len(sys.argv) > 2 else ".")
    runs = [r for r in RUNS if pattern.search(f"{r[0]} {r[1]}")]
    for task, library, iterations, guard in sorted(runs, key=lambda r: r[3]):  # the shortest first
        if DEADLINE - time.time() < 45:
            results["runs"].append({"task": task, "library": library, "skipped": "device-call budget spent"})
            continue
        row = run(task, library, iterations, guard)
        results["runs"].append(row)
        curve = row["curves"].get(RETURN_TAG[library], [])
        print(f"{task} {library}: rc {row['rc']} wall {row['wall_s']} s, "
              f"train fps {row.get('perf', {}).get('train_fps')}, "
              f"return first {curve[0][2] if curve else None} last {curve[-1][2] if curve else None}", flush=True)
        with open(os.path.join(OUT, "tasks_h200.json"), "w") as f:
            json.dump(results, f, indent=1)
    print(f"tasks done in {time.time() - START:.0f} s", flush=True)


if __name__ == "__main__":
    main()
