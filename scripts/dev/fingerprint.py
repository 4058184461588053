"""Behaviour fingerprint of every library workflow: a fixed-seed 2-iteration CPU training run (final parameter
checksum) and a 200-step play of its checkpoint (mean return), one process each. A refactor that changes no
behaviour leaves every line identical.

    python scripts/dev/fingerprint.py [--out FILE]      (run from the repo root; needs .venv with every extra)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNS = {  # name -> (library flags, task)
    "rsl_rl": (["--library", "rsl_rl"], "Isaac-Cartpole-v0"),
    "rl_games": (["--library", "rl_games"], "Isaac-Cartpole-v0"),
    "skrl-torch": (["--library", "skrl"], "Isaac-Cartpole-v0"),
    "skrl-jax": (["--library", "skrl", "--ml_framework", "jax"], "Isaac-Cartpole-v0"),
    "rsl_rl-direct": (["--library", "rsl_rl"], "Isaac-Cartpole-Direct-v0"),
    "rsl_rl-ant": (["--library", "rsl_rl"], "Isaac-Ant-v0"),
    "rsl_rl-humanoid": (["--library", "rsl_rl"], "Isaac-Humanoid-v0"),
    "brax": (["--library", "brax"], "Isaac-Cartpole-v0"),
}


def _run(args: list[str], cwd: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"), JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-m", "fleetlab", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{args} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def fingerprint(name: str) -> dict:
    lib, task = RUNS[name]
    common = [*lib, "--task", task, "--device", "cpu", "--num_envs", "64", "--seed", "7", "--headless"]
    with tempfile.TemporaryDirectory(prefix="fleetlab-fp-") as work:
        _run(["train", *common, "--max_iterations", "2"], work)
        summary = next(os.path.join(d, "summary.json") for d, _, f in os.walk(work) if "summary.json" in f)
        with open(summary) as f:
            checksum = json.load(f)["ranks"][0]["checksum"]
        no_export = ["--no-export"] if lib[1] == "rsl_rl" else []
        _run(["play", *common, "--steps", "200", *no_export], work)
        play = next(os.path.join(d, "play.json") for d, _, f in os.walk(work) if "play.json" in f)
        with open(play) as f:
            mean_return = json.load(f)["mean_return"]
    return {"run": name, "checksum": checksum, "mean_return": mean_return}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    parser.add_argument("--runs", nargs="+", default=list(RUNS))
    args = parser.parse_args()
    rows = []
    for name in args.runs:
        rows.append(fingerprint(name))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
