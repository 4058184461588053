"""Env-only throughput with random actions, compile time reported apart. Median of several timed repeats."""

from __future__ import annotations

import dataclasses
import statistics
import time

import jax
import jax.numpy as jnp
import torch

from fleetlab.envs import make, resolve, task_cfg
from fleetlab.envs.registry import make_from_cfg
from fleetlab.errors import FleetlabError


def bench_env(task: str, num_envs: int, device: str = "cpu", steps: int = 200, repeats: int = 5,
              physics: dict | None = None, view: str = "torch") -> dict:
    """Steps/s (env-steps, i.e. num_envs x calls) through the torch view (DLPack in and out) or the JAX view.
    `physics`: PhysicsOptions fields that replace the task's (the --physics_* flags)."""
    if view not in ("torch", "jax"):
        raise FleetlabError(f"view must be 'torch' or 'jax', got '{view}'")
    t0 = time.perf_counter()
    entry = resolve(task)
    cfg = task_cfg(entry)
    env = make_from_cfg(dataclasses.replace(cfg, physics=dataclasses.replace(cfg.physics, **(physics or {}))),
                        entry.id, num_envs, device)
    jax.block_until_ready(env.state.obs)
    t_make = time.perf_counter() - t0

    torch_device = torch.device(device)
    key = jax.random.PRNGKey(0)

    def random_action(i):
        if view == "torch":
            return torch.rand(num_envs, env.num_actions, device=torch_device) * 2 - 1
        action = jax.random.uniform(jax.random.fold_in(key, i), (num_envs, env.num_actions), minval=-1, maxval=1)
        return jax.device_put(action, env.core.physics.device)

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
        "impl": env.core.physics.impl,
        "view": view,
        "steps_per_repeat": steps,
        "repeats": repeats,
        "env_steps_per_s_median": statistics.median(rates),
        "env_steps_per_s_all": rates,
        "ms_per_call_median": statistics.median(per_call_ms),
        "make_s": t_make,
        "compile_s": t_compile,
    }


def breakdown(task: str, num_envs: int, device: str = "cpu", steps: int = 200, repeats: int = 5) -> dict:
    """Where an env step's time goes (median ms per env step, each measured in this run):
    - scan_floor: 16 steps inside one jitted lax.scan (physics + task, no Python, no dispatch);
    - jit_async: one jitted call per step from Python, never waiting (dispatch-bound when > scan_floor);
    - jit_synced: the same, waiting for each result (what a caller that reads the obs pays);
    - torch_view: VecEnv.step with torch actions in and DLPack views out (what rsl_rl/rl_games/skrl-torch pay)."""
    env = make(task, num_envs=num_envs, device=device)
    physics_device = env.core.physics.device
    action_j = jax.device_put(jnp.zeros((num_envs, env.num_actions), jnp.float32), physics_device)
    action_t = torch.zeros(num_envs, env.num_actions, device=torch.device(device))
    batched_step = jax.vmap(env.core.step)

    @jax.jit
    def scan16(state, action):
        return jax.lax.scan(lambda s, _: (batched_step(s, action), None), state, None, length=16)[0]

    def timed(fn, n):
        fn()  # warm-up / compile
        jax.block_until_ready(env.state.obs)
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            jax.block_until_ready(env.state.obs)
            out.append((time.perf_counter() - t0) / n * 1e3)
        return statistics.median(out)

    def scan_call():
        env.state = scan16(env.state, action_j)

    def jit_async():
        env.state, _, _ = env._step_fn(env.state, action_j)

    def jit_synced():
        env.state, packed, _ = env._step_fn(env.state, action_j)
        packed.block_until_ready()

    result = {
        "task": task, "num_envs": num_envs, "device": device,
        "scan_floor_ms": timed(scan_call, max(steps // 16, 4)) / 16,
        "jit_async_ms": timed(jit_async, steps),
        "jit_synced_ms": timed(jit_synced, steps),
        "torch_view_ms": timed(lambda: env.step(action_t), steps),
    }
    return result
