"""Where an rsl_rl iteration's time goes (issue F): rollout vs PPO update, each rollout step split into policy
inference, env step (JAX + DLPack) and bookkeeping, and the CUDA kernel launches and host syncs per iteration.

    python benchmarks/profile_rsl_rl.py --num_envs 4096 --device cuda:0 --json out.json

Variants, measured in the same process: `fleetlab` (our runner as shipped), `before_F` (the runner before issue F's
fixes: rsl_rl's per-step check_nan, foreach Adam, and our old per-step episode bookkeeping with its host syncs)
and `compile` (rsl_rl's own torch_compile_mode="default" on top of `fleetlab`)."""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time

import torch

from fleetlab.distributed import RunContext
from fleetlab.envs import make
from fleetlab.rl.rsl_rl.env import RslRlVecEnvWrapper
from fleetlab.rl.rsl_rl.runner import FleetOnPolicyRunner
from fleetlab.tasks.cartpole.agents import rsl_rl as rsl_cfg


def build(task: str, num_envs: int, device: str, variant: str) -> FleetOnPolicyRunner:
    env = RslRlVecEnvWrapper(make(task, num_envs=num_envs, device=device))
    cfg = rsl_cfg()
    if variant == "before_F":
        cfg["check_for_nan"] = True
    if variant == "compile":
        cfg["torch_compile_mode"] = "default"
    runner = FleetOnPolicyRunner(env, cfg, log_dir=None, ctx=RunContext(device=device))
    if variant == "before_F":  # back to upstream's foreach Adam and the old bookkeeping
        opt = runner.alg.optimizer
        params = [p for g in opt.param_groups for p in g["params"]]
        runner.alg.optimizer = torch.optim.Adam(params, lr=opt.param_groups[0]["lr"])
        runner.logger.process_env_step = _old_bookkeeping(runner.logger)
    return runner


def _old_bookkeeping(logger):
    """SyncedLogger.process_env_step before issue F: a dict of per-key device scalars (one index op per key, as
    the torch view made them), and `ended.any()` + `.tolist()` host syncs on every step."""

    def process_env_step(rewards, dones, extras, intrinsic_rewards=None):
        log = extras["log"]
        logger.ep_extras.append({n: log.values[i] for i, n in enumerate(log.names)})
        logger.log_names = None
        logger.cur_reward_sum += rewards
        logger.cur_episode_length += 1
        ended = dones > 0
        if ended.any():
            logger.rewbuffer.extend(logger.cur_reward_sum[ended].tolist())
            logger.lenbuffer.extend(logger.cur_episode_length[ended].tolist())
            logger.cur_reward_sum[ended] = 0
            logger.cur_episode_length[ended] = 0

    return process_env_step


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
    parser.add_argument("--variants", nargs="+", default=["fleetlab", "before_F", "compile"])
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
