"""A task whose returns depend on the process: Cartpole that never terminates, with episodes of 0.5 s (30 steps;
env.episode_length_s changes it) and only the alive term, weighted 1 + rank. Rank 0's episodes return 0.5 per
0.5 s, rank 1's twice that: a logger that pools both ranks reports 1.5 x rank 0's return, one that logs rank 0's
own episodes 1.0 x. Loaded with `--import rank_reward_task`."""

import os

from fleetlab import mdp
from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.cartpole import agents, cfg


def rank_reward():
    rank = int(os.environ.get("RANK", os.environ.get("JAX_RANK", "0")))
    return cfg.cartpole().replace(
        episode_length_s=0.5,
        rewards={"alive": mdp.RewTerm(func=mdp.is_alive, weight=1.0 + rank)},
        terminations={"time_out": mdp.DoneTerm(func=mdp.time_out, time_out=True)})


register(TaskEntry("Test-RankReward-v0", rank_reward, description="returns depend on the rank", agents=agents.ALL))
