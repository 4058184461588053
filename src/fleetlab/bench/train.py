"""`fleetlab bench train`: Isaac Lab's three figures (env-step FPS, FPS with policy inference, FPS with training)
per library, number of envs and number of processes, with weak-scaling efficiency, JIT and startup time, peak
memory, and a pure-torch baseline measured in the same run. Writes JSON, a Markdown table and a PNG plot.

Each configuration is a real training run launched the documented way (torchrun, or our JAX launcher for
skrl-JAX) with `--bench`; its numbers come from the run's summary.json."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from fleetlab.errors import FleetlabError

REPO_SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "reinforcement_learning")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _command(variant: str, task: str, num_envs: int, nproc: int, iterations: int, device: str,
             imports: list[str] = (), impl: str = "auto") -> list[str]:
    from fleetlab.rl.args import parse
    from fleetlab.rl.library import library, variants

    lib, flags = variants()[variant]
    script = os.path.abspath(os.path.join(REPO_SCRIPTS, lib, "train.py"))
    args = [script, f"--task={task}", "--headless", "--distributed", f"--num_envs={num_envs}",
            f"--max_iterations={iterations}", "--bench", f"--device={device}", f"--physics_impl={impl}", *flags]
    args += [f"--import={name}" for name in imports]
    if library(lib).framework(parse(lib, argv=flags)) == "jax":
        return [sys.executable, "-m", "fleetlab.distributed.jax_launch", "--nnodes=1", f"--nproc_per_node={nproc}",
                f"--coordinator_address=127.0.0.1:{_free_port()}", *args]
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc_per_node={nproc}",
            f"--master_port={_free_port()}", *args]


def run_one(library: str, task: str, num_envs: int, nproc: int, iterations: int, device: str,
            timeout_s: float = 600, imports: list[str] = (), impl: str = "auto") -> dict:
    with tempfile.TemporaryDirectory(prefix="fleetlab-bench-") as work:
        t0 = time.time()
        try:
            # an empty JAX compilation cache: the JIT figure is the cold one a first run pays
            env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=os.path.join(work, "jax-cache"))
            command = _command(library, task, num_envs, nproc, iterations, device, imports, impl)
            proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as err:
            proc = subprocess.CompletedProcess(err.cmd, 124, "", f"timed out after {timeout_s} s")
        wall = time.time() - t0
        summaries = [os.path.join(d, "summary.json") for d, _, files in os.walk(work) if "summary.json" in files]
        row = {"library": library, "task": task, "num_envs": num_envs, "nproc": nproc, "iterations": iterations,
               "device": device, "physics_impl": impl, "rc": proc.returncode, "launch_wall_s": wall}
        if proc.returncode or not summaries:
            row["error"] = (proc.stderr or proc.stdout)[-2000:]
            return row
        with open(summaries[0]) as f:
            summary = json.load(f)
        row.update(summary["perf"], train_wall_s=summary["wall_s"], checksums_identical=summary["checksums_identical"],
                   physics_impl=summary["physics_impl"])
        return row


def run_baseline(num_envs: int, iterations: int, device: str) -> dict:
    """rsl_rl on the pure-torch cartpole, in this process (one process: it is the single-GPU reference)."""
    import statistics

    from fleetlab.bench.torch_cartpole import TorchCartpole
    from fleetlab.distributed import RunContext
    from fleetlab.rl.perf import rollout_fps
    from fleetlab.rl.rsl_rl.env import RslRlVecEnvWrapper
    from fleetlab.rl.rsl_rl.runner import FleetOnPolicyRunner, as_obs_policy
    from fleetlab.tasks.cartpole.agents import rsl_rl as cfg

    dev = "cuda:0" if device.startswith("cuda") else "cpu"
    env = TorchCartpole(num_envs, device=dev)
    runner = FleetOnPolicyRunner(RslRlVecEnvWrapper(env), cfg(), log_dir=None, ctx=RunContext(device=dev))
    t0 = time.time()
    runner.learn(iterations)
    steady = runner.logger.local_fps[1:] or runner.logger.local_fps
    policy = as_obs_policy(runner.get_inference_policy(device=dev), env)
    return {"library": "rsl_rl (pure-torch cartpole baseline)", "task": "torch cartpole", "num_envs": num_envs,
            "nproc": 1, "iterations": iterations, "device": device, "rc": 0, "train_wall_s": time.time() - t0,
            "train_fps": statistics.median(steady), "env_fps": rollout_fps(env, None),
            "inference_fps": rollout_fps(env, policy), "jit_s": 0.0}


def add_efficiency(rows: list[dict]) -> None:
    """Weak scaling: FPS with N processes / (N x FPS with 1), for the same library, physics and envs per process."""
    def key(r):
        return r["library"], r.get("physics_impl"), r["num_envs"]

    single = {key(r): r for r in rows if r["nproc"] == 1 and r.get("train_fps")}
    for r in rows:
        base = single.get(key(r))
        if base and r.get("train_fps"):
            r["weak_scaling_efficiency"] = r["train_fps"] / (r["nproc"] * base["train_fps"])


def _fmt(v, kind="fps"):
    if v is None:
        return "–"
    if kind == "fps":
        return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.0f}k"
    return f"{v:.2f}" if kind == "eff" else f"{v:.1f}"


def markdown(rows: list[dict]) -> str:
    """startup = process start to env ready (imports, distributed init, env build); whole run = start to the end
    of training and the --bench rollouts."""
    head = ("| library | physics | envs/proc | procs | env-step FPS | with inference | with training "
            "| weak-scaling eff. | JIT s | startup s | whole run s | peak GPU MB |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        if r.get("rc"):
            lines.append(f"| {r['library']} | {r.get('physics_impl', '–')} | {r['num_envs']} | {r['nproc']} "
                         f"| failed (rc {r['rc']}) | | | | | | | |")
            continue
        lines.append(
            f"| {r['library']} | {r.get('physics_impl', '–')} | {r['num_envs']} | {r['nproc']} "
            f"| {_fmt(r.get('env_fps'))} | {_fmt(r.get('inference_fps'))} | {_fmt(r.get('train_fps'))} "
            f"| {_fmt(r.get('weak_scaling_efficiency'), 'eff')} | {_fmt(r.get('jit_s'), 's')} "
            f"| {_fmt(r.get('startup_s'), 's')} | {_fmt(r.get('process_s'), 's')} "
            f"| {_fmt(r.get('peak_mem_mb'), 's')} |")
    return head + "\n".join(lines) + "\n"


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if not r.get("rc")]
    labels = [f"{r['library'].split(' ')[0]}{'*' if 'baseline' in r['library'] else ''}\n{r['num_envs']}x{r['nproc']}"
              for r in ok]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(ok)), 4.5))
    width = 0.27
    bars = [("env_fps", "env step"), ("inference_fps", "+ inference"), ("train_fps", "+ training")]
    for i, (key, name) in enumerate(bars):
        ax.bar([x + (i - 1) * width for x in range(len(ok))], [r.get(key) or 0 for r in ok], width, label=name)
    ax.set_yscale("log")
    ax.set_ylabel("env-steps / s (all processes)")
    ax.set_xticks(range(len(ok)), labels, fontsize=8)
    main = next((r for r in ok if "baseline" not in r["library"]), ok[0] if ok else {"task": "", "device": ""})
    ax.set_title(f"fleetlab bench: {main['task']} on {main['device']} (* = pure-torch baseline)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def bench_train(libraries, task, num_envs_list, nprocs, iterations, device, out_dir, baseline=True,
                imports: list[str] = (), impls: list[str] = ("auto",)) -> list[dict]:
    from fleetlab.envs.registry import resolve
    from fleetlab.rl.library import variants
    from fleetlab.rl.run import load_tasks

    for lib in libraries:
        if lib not in variants():
            raise FleetlabError(f"unknown library '{lib}': choose from {', '.join(variants())}")
    load_tasks(list(imports))

    # the baseline is a hand-written Cartpole: it says what the physics engine costs on that task only
    baseline = baseline and resolve(task).id == "Fleet-Cartpole-v0"
    rows = []
    for num_envs in num_envs_list:
        if baseline:
            rows.append(run_baseline(num_envs, iterations, device))
            print(f"[bench] baseline {num_envs} envs: {_fmt(rows[-1]['train_fps'])} training FPS", flush=True)
        for lib, nproc, impl in itertools.product(libraries, nprocs, impls):
            rows.append(run_one(lib, task, num_envs, nproc, iterations, device, imports=imports, impl=impl))
            r = rows[-1]
            print(f"[bench] {lib} {num_envs} envs x {nproc}, physics {r['physics_impl']}: "
                  + (f"failed rc {r['rc']}" if r.get("rc") else
                     f"env {_fmt(r.get('env_fps'))}, inference {_fmt(r.get('inference_fps'))}, "
                     f"training {_fmt(r.get('train_fps'))}"), flush=True)
    add_efficiency(rows)
    for r in rows:
        base = next((b for b in rows if "baseline" in b["library"] and b["num_envs"] == r["num_envs"]), None)
        if base and r["library"] == "rsl_rl" and r.get("train_fps") and r["nproc"] == 1:
            r["vs_torch_baseline"] = r["train_fps"] / base["train_fps"]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "bench_train.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    with open(os.path.join(out_dir, "bench_train.md"), "w") as f:
        f.write(markdown(rows))
    plot(rows, os.path.join(out_dir, "bench_train.png"))
    return rows
