"""The figures `fleetlab bench train` reads from a run's summary.json: Isaac Lab's three FPS, JIT, start-up, memory."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Callable

from fleetlab.envs.vec_env import seconds_since_process_start

if TYPE_CHECKING:
    import torch


def rollout_fps(env, policy: Callable[[torch.Tensor], torch.Tensor] | None, steps: int = 200) -> float:
    """Env-steps/s of `steps` steps through the torch view: random actions (policy None) or `policy(obs)`."""
    import torch

    obs = env.observations["policy"]
    device = torch.device(env.device)
    with torch.inference_mode():
        for i in range(steps + 1):
            if i == 1:  # step 0 may compile
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                t0 = time.perf_counter()
            action = torch.rand(env.num_envs, env.num_actions, device=device) * 2 - 1 if policy is None else policy(obs)
            obs = env.step(action)[0]["policy"]
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return steps * env.num_envs / (time.perf_counter() - t0)


def perf_record(env, train_fps: float | None, policy=None, measure_rollouts: bool = False) -> dict:
    """This rank's figures for `fleetlab bench`: Isaac Lab's three FPS (env only, with policy inference, with
    training), the env's JIT time, the time from process start to now, and peak device memory."""
    rec = {"train_fps": train_fps, "jit_s": env.compile_s, "startup_s": getattr(env, "startup_s", None),
           "process_s": seconds_since_process_start()}
    if measure_rollouts:
        rec["env_fps"] = rollout_fps(env, None)
        rec["inference_fps"] = rollout_fps(env, policy) if policy is not None else None
    if str(env.device).startswith("cuda"):
        torch = sys.modules.get("torch")  # a JAX workflow may never have imported torch, nor used its CUDA
        torch_used = torch is not None and torch.cuda.is_initialized()
        torch_peak = torch.cuda.max_memory_allocated(torch.device(env.device)) if torch_used else 0
        stats = env.core.physics.device.memory_stats() or {}
        rec["peak_mem_mb"] = (torch_peak + stats.get("peak_bytes_in_use", 0)) / 2**20
    return rec


def aggregate(perfs: list[dict]) -> dict:
    out = {}
    for key in ("train_fps", "env_fps", "inference_fps"):
        vals = [p.get(key) for p in perfs]
        out[key] = sum(vals) if vals and all(v is not None for v in vals) else None  # summed over ranks
    for key in dict.fromkeys(k for p in perfs for k in p if not k.endswith("_fps")):
        vals = [p[key] for p in perfs if p.get(key) is not None]
        out[key] = max(vals) if vals else None  # times and memory: the slowest / largest rank
    return out
