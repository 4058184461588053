"""A task whose returns depend on the process: Cartpole that never terminates, with episodes of 0.5 s (30 steps;
env.episode_length_s changes it) and only the alive term, weighted 1 + rank. Rank 0's episodes return 0.5 per
0.5 s, rank 1's twice that: a logger that pools both ranks reports 1.5 x rank 0's return, one that logs rank 0's
own episodes 1.0 x. Loaded with `--import rank_reward_task`."""

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
