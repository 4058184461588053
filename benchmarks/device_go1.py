"""Issue C on the H200 (device tool): train Isaac-Velocity-Flat-Unitree-Go1-v0 for Isaac Lab's budget (300
iterations x 24 steps x 4096 envs) and play the result on the play variant for 1000 steps, per variant.

    python3 benchmarks/device_go1.py COMMIT VARIANT...   (after the installs of benchmarks/device_warp.sh)

NPROC=N trains with N processes under `fleetlab launch` (one GPU each, NUM_ENVS per GPU; issue G); play is one
process either way.

VARIANT is a name from VARIANTS. The wall time is the whole `fleetlab train` process (imports and compiles
included). Writes $OUT/go1_<variant>.json (train row with the return curve, play result) and, for the variants in
$VIDEO (comma-separated), $OUT/go1_<variant>.mp4."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from device_tasks import run_results

OUT = os.environ.get("OUT", "/tmp/out")
NUM_ENVS = int(os.environ.get("NUM_ENVS", 4096))
PLAY_ENVS = int(os.environ.get("PLAY_ENVS", 1024))
ITERATIONS = int(os.environ.get("MAX_ITERATIONS", 300))
DEVICE = os.environ.get("DEVICE", "cuda:0")
NPROC = int(os.environ.get("NPROC", 1))
PHYSICS_IMPL = os.environ.get("PHYSICS_IMPL", "warp")
VIDEO = set(os.environ.get("VIDEO", "").split(","))
TASK, PLAY_TASK = "Isaac-Velocity-Flat-Unitree-Go1-v0", "Isaac-Velocity-Flat-Unitree-Go1-Play-v0"
# name: (library, agent overrides). rl_games and skrl get Isaac Lab's budget in their own units: 300 epochs of 24
# steps (rl_games' max_epochs) and 7200 timesteps (skrl), as their Go1 configs set.
# At 35621d7 the rsl_rl config had no observation normalization (Isaac Lab's); "rsl_rl_obsnorm" is the default since.
VARIANTS = {
    "rsl_rl": ("rsl_rl", []),
    "rsl_rl_obsnorm": ("rsl_rl", ["agent.actor.obs_normalization=true", "agent.critic.obs_normalization=true"]),
    "rsl_rl_isaaclab": ("rsl_rl", ["agent.actor.obs_normalization=false", "agent.critic.obs_normalization=false"]),
    "rl_games": ("rl_games", []),
    "rl_games_norm": ("rl_games", ["agent.params.config.normalize_input=true"]),
    "skrl": ("skrl", []),
}
START = time.time()
DEADLINE = START + float(os.environ.get("BUDGET_S", 570))


def timed(cmd: list[str], cwd: str, log_name: str, guard_s: float) -> tuple[int, float, str]:
    """Run `cmd` under a wall-clock guard (SIGTERM: our runners checkpoint and stop); (rc, wall s, log tail)."""
    t0 = time.time()
    log_path = os.path.join(cwd, log_name)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=max(10.0, guard_s))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
    with open(log_path) as f:
        return rc, round(time.time() - t0, 1), f.read()[-2000:]


def variant(name: str) -> dict:
    library, overrides = VARIANTS[name]
    cwd = f"/tmp/go1/{name}"
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    common = ["--library", library, "--num_envs", str(NUM_ENVS), "--device", DEVICE, "--physics_impl", PHYSICS_IMPL,
              "--headless"]
    launch = ["launch", "--nproc_per_node", str(NPROC), "--"] if NPROC > 1 else []
    train = [sys.executable, "-m", "fleetlab", *launch, "train", "--task", TASK, "--max_iterations", str(ITERATIONS),
             *common, *overrides]
    rc, wall, tail = timed(train, cwd, "train.log", min(330.0, DEADLINE - time.time() - 80))
    row = {"variant": name, "library": library, "overrides": overrides, "task": TASK, "num_envs": NUM_ENVS,
           "nproc": NPROC, "iterations": ITERATIONS, "physics_impl": PHYSICS_IMPL, "command": " ".join(train[1:]),
           "train_rc": rc, "process_wall_s": wall, "train_console_tail": tail}
    row.update(run_results(cwd))
    checkpoints = sorted(glob.glob(os.path.join(cwd, "logs", "rsl_rl", "**", "model_*.pt"), recursive=True),
                         key=os.path.getmtime)
    if checkpoints:  # the GPU machine has no GL: the video is rendered from it elsewhere (`fleetlab play --video`)
        shutil.copy(checkpoints[-1], os.path.join(OUT, f"go1_{name}.pt"))
    play = [sys.executable, "-m", "fleetlab", "play", "--task", PLAY_TASK, "--steps", "1000",
            *[a if a != str(NUM_ENVS) else str(PLAY_ENVS) for a in common], *overrides]
    if name in VIDEO:
        play += ["--video", "--video_length", "400"]
    rc, wall, tail = timed(play, cwd, "play.log", min(150.0, DEADLINE - time.time() - 10))
    row.update(play_command=" ".join(play[1:]), play_rc=rc, play_wall_s=wall, play_console_tail=tail)
    played = glob.glob(os.path.join(cwd, "logs", "**", "play.json"), recursive=True)
    if played:
        with open(played[0]) as f:
            row["play"] = json.load(f)
        if row["play"].get("video"):
            shutil.copy(row["play"]["video"], os.path.join(OUT, f"go1_{name}.mp4"))
    return row


def main() -> None:
    import torch

    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[2:]:
        if DEADLINE - time.time() < 120:
            print(f"{name}: skipped, the call's budget is spent", flush=True)
            continue
        row = variant(name)
        row.update(commit=sys.argv[1], date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
        with open(os.path.join(OUT, f"go1_{name}.json"), "w") as f:
            json.dump(row, f, indent=1)
        play = row.get("play", {})
        print(f"{name}: train rc {row['train_rc']} {row['process_wall_s']} s (learn {row.get('train_wall_s')} s), "
              f"final {row.get('final')}, play rc {row['play_rc']} metrics {play.get('metrics')} "
              f"falls {play.get('terminated_fraction')} of {play.get('episodes')}", flush=True)


if __name__ == "__main__":
    main()
