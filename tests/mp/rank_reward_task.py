"""A task whose returns depend on the process: Cartpole that never terminates, with episodes of 30 steps (0.5 s)
and only the alive term, weighted 1 + rank. Rank 0's episodes return 0.5, rank 1's 1.0: a logger that pools both
ranks reports 0.75, one that logs rank 0's own episodes 0.5. Loaded with `--import rank_reward_task`."""

import dataclasses
import os

import jax.numpy as jnp

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.cartpole import agents, env

ZERO = {"alive": 0.0, "terminating": 0.0, "pole_pos": 0.0, "cart_vel": 0.0, "pole_vel": 0.0}


def make_task(**overrides):
    rank = int(os.environ.get("RANK", os.environ.get("JAX_RANK", "0")))
    weights = {**ZERO, "alive": 1.0 + rank}
    task = env.make_task(**{"episode_length_s": 0.5, "reward_weights": weights, **overrides})
    return dataclasses.replace(task, terminated=lambda cfg, data: jnp.zeros((), bool))


register(TaskEntry("Test-RankReward-v0", make_task, description="returns depend on the rank", agents=agents.ALL))
