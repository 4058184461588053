"""Where an rsl_rl iteration's time goes (issue F): rollout vs PPO update, each rollout step split into policy
inference, env step (JAX + DLPack) and bookkeeping, and the CUDA kernel launches and host syncs per iteration.

    python benchmarks/profile_rsl_rl.py --num_envs 4096 --device cuda:0 --json out.json

Variants, measured in the same process: `fleetlab` (our runner as shipped), `upstream_checks` (rsl_rl's per-step
check_nan and foreach Adam put back, i.e. the runner before issue F's fixes, minus the logger change) and `compile`
(rsl_rl's own torch_compile_mode="default" on top of `fleetlab`)."""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time

import torch

from fleetlab.distributed import RunContext
from fleetlab.envs import make
from fleetlab.rl.rsl_rl import FleetOnPolicyRunner, RslRlVecEnvWrapper
from fleetlab.tasks.cartpole.agents.rsl_rl_ppo_cfg import cfg as rsl_cfg


def build(task: str, num_envs: int, device: str, variant: str) -> FleetOnPolicyRunner:
    env = RslRlVecEnvWrapper(make(task, num_envs=num_envs, device=device))
    cfg = rsl_cfg()
    if variant == "upstream_checks":
        cfg["check_for_nan"] = True
    if variant == "compile":
        cfg["torch_compile_mode"] = "default"
    runner = FleetOnPolicyRunner(env, cfg, log_dir=None, ctx=RunContext(device=device))
    if variant == "upstream_checks":  # back to upstream's foreach Adam
        opt = runner.alg.optimizer
        params = [p for g in opt.param_groups for p in g["params"]]
        runner.alg.optimizer = torch.optim.Adam(params, lr=opt.param_groups[0]["lr"])
    return runner


def split_times(runner, iterations: int) -> dict:
    runner.logger.split.clear()
    runner.learn(iterations)
    c = [a for a, _ in runner.logger.split]
    u = [b for _, b in runner.logger.split]
    steps = runner.cfg["num_steps_per_env"] * runner.env.num_envs
    return {"rollout_ms": 1e3 * statistics.median(c), "update_ms": 1e3 * statistics.median(u),
            "train_fps": steps / (statistics.median(c) + statistics.median(u))}


def sections(runner, iterations: int, device: str) -> dict:
    """Each piece timed with a device sync on both sides (so overlap is lost: these add up to more than the
    unsynced iteration, but say which piece is large)."""
    times = collections.defaultdict(list)
    sync = (lambda: torch.cuda.synchronize(device)) if device.startswith("cuda") else (lambda: None)

    def timed(name, fn):
        def wrapper(*a, **k):
            sync()
            t0 = time.perf_counter()
            out = fn(*a, **k)
            sync()
            times[name].append(time.perf_counter() - t0)
            return out
        return wrapper

    alg, env, logger = runner.alg, runner.env, runner.logger
    saved = (alg.act, env.step, alg.process_env_step, logger.process_env_step, alg.compute_returns, alg.update, logger.log)
    alg.act = timed("policy_inference", alg.act)
    env.step = timed("env_step", env.step)
    alg.process_env_step = timed("storage", alg.process_env_step)
    logger.process_env_step = timed("episode_bookkeeping", logger.process_env_step)
    alg.compute_returns = timed("compute_returns", alg.compute_returns)
    alg.update = timed("ppo_update", alg.update)
    logger.log = timed("log", logger.log)
    try:
        runner.learn(iterations)
    finally:
        (alg.act, env.step, alg.process_env_step, logger.process_env_step, alg.compute_returns, alg.update,
         logger.log) = saved
    per_it = {k: 1e3 * sum(v) / iterations for k, v in times.items()}
    per_call = {k: 1e3 * statistics.median(v) for k, v in times.items()}
    return {"ms_per_iteration": per_it, "ms_per_call_median": per_call}


def kernel_counts(runner, device: str) -> dict:
    """CUDA kernel launches and host syncs in one iteration, from the torch profiler (torch's kernels only:
    the JAX step's kernels are not seen, its dispatch is)."""
    if not device.startswith("cuda"):
        return {}
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        runner.learn(1)
    counts = collections.Counter()
    for e in prof.events():
        name = e.name
        if name in ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"):
            counts["kernel_launches"] += 1
        elif "Synchronize" in name:
            counts["syncs"] += 1
        elif name in ("cudaMemcpyAsync", "cudaMemcpy"):
            counts["memcpy"] += 1
    top = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25)
    return {**counts, "top_ops": top}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="Isaac-Cartpole-v0")
    parser.add_argument("--num_envs", type=int, nargs="+", default=[4096])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--variants", nargs="+", default=["fleetlab", "upstream_checks", "compile"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    out = []
    for num_envs in args.num_envs:
        for variant in args.variants:
            t0 = time.perf_counter()
            runner = build(args.task, num_envs, args.device, variant)
            runner.learn(2)  # JIT, compile and warm-up
            row = {"num_envs": num_envs, "variant": variant, "warmup_s": time.perf_counter() - t0,
                   **split_times(runner, args.iterations)}
            if variant == "fleetlab":
                row["sections"] = sections(runner, 4, args.device)
                row["profile"] = kernel_counts(runner, args.device)
            print(json.dumps({k: v for k, v in row.items() if k not in ("sections", "profile")}), flush=True)
            if "sections" in row:
                print(json.dumps(row["sections"]), flush=True)
            out.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
