"""Env-only throughput with random actions, compile time reported apart. Median of several timed repeats."""

from __future__ import annotations

import statistics
import time

import jax
import torch

from fleetlab.envs import make


def bench_env(task: str, num_envs: int, device: str = "cpu", steps: int = 200, repeats: int = 5, impl: str = "jax",
              view: str = "torch") -> dict:
    """Steps/s (env-steps, i.e. num_envs x calls) through the torch view (DLPack in and out) or the JAX view."""
    if view not in ("torch", "jax"):
        raise ValueError(f"view must be 'torch' or 'jax', got '{view}'")
    t0 = time.perf_counter()
    env = make(task, num_envs=num_envs, device=device, impl=impl)
    jax.block_until_ready(env.state.obs)
    t_make = time.perf_counter() - t0

    torch_device = torch.device(device)
    key = jax.random.PRNGKey(0)

    def random_action(i):
        if view == "torch":
            return torch.rand(num_envs, env.num_actions, device=torch_device) * 2 - 1
        return jax.device_put(jax.random.uniform(jax.random.fold_in(key, i), (num_envs, env.num_actions), minval=-1, maxval=1),
                              env.core.physics.device)

    step = env.step if view == "torch" else env.step_jax
    t0 = time.perf_counter()
    step(random_action(0))
    jax.block_until_ready(env.state.obs)
    t_compile = time.perf_counter() - t0

    rates, per_call_ms = [], []
    for r in range(repeats):
        actions = [random_action(i) for i in range(8)]  # made before timing: we time the env, not the RNG
        if device.startswith("cuda"):
            torch.cuda.synchronize(torch_device)
        t0 = time.perf_counter()
        for i in range(steps):
            step(actions[i % 8])
        jax.block_until_ready(env.state.obs)
        dt = time.perf_counter() - t0
        rates.append(steps * num_envs / dt)
        per_call_ms.append(dt / steps * 1e3)
    return {
        "task": task,
        "num_envs": num_envs,
        "device": device,
        "impl": impl,
        "view": view,
        "steps_per_repeat": steps,
        "repeats": repeats,
        "env_steps_per_s_median": statistics.median(rates),
        "env_steps_per_s_all": rates,
        "ms_per_call_median": statistics.median(per_call_ms),
        "make_s": t_make,
        "compile_s": t_compile,
    }
