"""Issue D: the brax rollout with the physics Data carried from step to step (BraxEnv on Warp) against the Data
rebuilt from qpos/qvel and the template each step (the VecEnv's way). Runs each variant's 32-step rollout twice from
the same start with the same actions, and writes to OUT/carry_probe.json: the largest differences of qpos, obs and
reward between the two runs of one variant (the physics' own run-to-run noise) and between the variants, and each
variant's rollout env-steps/s (median of 5).

    python benchmarks/carry_probe.py OUT [NUM_ENVS [TASK DEVICE IMPL]]   (default 16384 Isaac-Humanoid-v0 cuda:0 warp)
"""

import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import fleetlab.tasks  # noqa: F401  (registers the tasks)
from fleetlab.envs import make
from fleetlab.envs.core import Env
from fleetlab.rl.brax.env import BraxEnv

out = sys.argv[1]
num_envs, task, device, impl = (sys.argv[2:] + ["16384", "Isaac-Humanoid-v0", "cuda:0", "warp"][len(sys.argv) - 2:])[:4]
num_envs, steps = int(num_envs), 32
core = make(task, num_envs, device=device, impl=impl).core


def rollout_fn(env: BraxEnv):
    axes = env.state_axes(jax.random.PRNGKey(0))
    step = jax.vmap(env.step, in_axes=(axes, 0), out_axes=axes)

    @jax.jit
    def rollout(state, actions):
        return jax.lax.scan(lambda s, a: (step(s, a), None), state, actions)[0]

    reset = jax.jit(jax.vmap(env.reset, out_axes=axes))
    return reset, rollout


carried = BraxEnv(core)
rebuilt = BraxEnv(core)
rebuilt.core = Env(rebuilt.core.task, rebuilt.core.physics)
keys = jax.random.split(jax.random.PRNGKey(0), num_envs)
actions = 0.5 * jnp.sin(jnp.arange(steps * num_envs * core.cfg.num_actions, dtype=jnp.float32))
actions = actions.reshape(steps, num_envs, core.cfg.num_actions)
results, finals = {"num_envs": num_envs, "task": task, "impl": impl, "carry": carried.core.carry_physics}, {}
variants = {"carried": carried, "rebuilt": rebuilt}
for name in os.environ.get("CARRY_PROBE_VARIANTS", "carried,rebuilt").split(","):  # which, in which order
    env = variants[name]
    reset, rollout = rollout_fn(env)
    runs, times = [], []
    for _ in range(2):
        final = rollout(reset(keys), actions)
        runs.append([np.asarray(x) for x in (final.pipeline_state.qpos, final.obs, final.reward)])
    start = reset(keys)
    jax.block_until_ready(start)
    for _ in range(5):
        t = time.time()
        jax.block_until_ready(rollout(start, actions).obs)
        times.append(time.time() - t)
    finals[name] = runs[0]
    results[name] = {"env_steps_per_s": steps * num_envs / float(np.median(times)),
                     "run_to_run_max_abs": [float(np.abs(a - b).max()) for a, b in zip(*runs)]}
if len(finals) < 2:
    print(json.dumps(results))
    sys.exit(0)
results["carried_vs_rebuilt_max_abs"] = [float(np.abs(a - b).max()) for a, b in zip(finals["carried"], finals["rebuilt"])]
results["carried_vs_rebuilt_mean_abs"] = [float(np.abs(a - b).mean()) for a, b in zip(finals["carried"], finals["rebuilt"])]
results["speedup"] = results["carried"]["env_steps_per_s"] / results["rebuilt"]["env_steps_per_s"]
with open(os.path.join(out, "carry_probe.json"), "w") as f:
    json.dump(results, f, indent=1)
print(json.dumps(results))
