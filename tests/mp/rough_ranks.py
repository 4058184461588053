"""Run under torchrun (2 procs, gloo): each rank builds the Go1 rough env with its own seed, steps it, and feeds the
env's log rows to the rsl_rl SyncedLogger; writes its terrain's fingerprint, its envs' levels after each step and
what the logger pooled."""

import hashlib
import json
import sys

import numpy as np
import torch

import fleetlab.tasks  # noqa: F401
from fleetlab.distributed import RunContext
from fleetlab.envs import make
from fleetlab.rl.rsl_rl.logger import SyncedLogger
from fleetlab.tasks.go1.rough_agents import rsl_rl as cfg

ctx = RunContext.from_env(distributed=True, device="cpu").init_process_group()
num_envs = 20
env = make("Isaac-Velocity-Rough-Unitree-Go1-v0", num_envs=num_envs, seed=ctx.rank, impl="jax")
logger = SyncedLogger(log_dir=None, cfg=cfg(), env_cfg={}, num_envs=num_envs, is_distributed=True, gpu_world_size=2,
                      gpu_global_rank=ctx.rank, device="cpu", ctx=ctx, iteration_end=lambda it, total_it: None)
levels = []
for _ in range(3):
    _, reward, terminated, truncated, extras = env.step(torch.zeros(num_envs, 12))
    logger.process_env_step(reward, (terminated | truncated).float(), extras)
    levels.append(np.asarray(env.state.persistent["terrain"]["level"]).tolist())
logger.log(it=0, start_it=0, total_it=1, collect_time=1.0, learn_time=1.0, loss_dict={}, learning_rate=1e-3,
           action_std=torch.ones(1), rnd_weight=None)
terrain = env.core.scene.height_field.heights
with open(f"result_{ctx.rank}.json", "w") as f:  # files, not stdout: the two ranks' lines interleave
    json.dump({"rank": ctx.rank, "terrain": hashlib.sha256(np.asarray(terrain).tobytes()).hexdigest(),
               "origins": hashlib.sha256(np.asarray(env.core.tiles.origins).tobytes()).hexdigest(),
               "columns": np.asarray(env.state.persistent["terrain"]["column"]).tolist(), "levels": levels,
               "pooled": logger.last["Curriculum/terrain_levels"]}, f)
sys.exit(0)
