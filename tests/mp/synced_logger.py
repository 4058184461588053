"""Run under torchrun (2 procs, gloo): each rank feeds its own episodes to SyncedLogger; print what rank 0 logs."""

import json
import sys

import torch

from fleetlab.distributed import RunContext
from fleetlab.rl.rsl_rl.logger import SyncedLogger
from fleetlab.tasks.cartpole.agents import rsl_rl as cfg

ctx = RunContext.from_env(distributed=True, device="cpu").init_process_group()
num_envs = 4
logger = SyncedLogger(log_dir=None, cfg=cfg(), env_cfg={}, num_envs=num_envs, is_distributed=True, gpu_world_size=2,
                      gpu_global_rank=ctx.rank, device="cpu", ctx=ctx, iteration_end=lambda it, total_it: None)
# rank 0: two episodes of return 1 each; rank 1: one episode of return 7 (the global mean is 3, rank 0's alone is 1)
reward = torch.full((num_envs,), 1.0 if ctx.rank == 0 else 7.0)
dones = torch.tensor([1.0, 1.0, 0, 0]) if ctx.rank == 0 else torch.tensor([1.0, 0, 0, 0])
log = {"Episode_Reward/alive": torch.tensor(2.0 if ctx.rank == 0 else float("nan"))}
if ctx.rank == 1:
    log["Episode_Reward/alive"] = torch.tensor(4.0)
logger.process_env_step(reward, dones, {"log": log})
logger.log(it=0, start_it=0, total_it=1, collect_time=0.5 if ctx.rank == 0 else 1.0, learn_time=0.5, loss_dict={},
           learning_rate=1e-3, action_std=torch.ones(1), rnd_weight=None)
with open(f"result_{ctx.rank}.json", "w") as f:  # files, not stdout: the two ranks' lines interleave
    json.dump({"rank": ctx.rank, **logger.last}, f)
sys.exit(0)
