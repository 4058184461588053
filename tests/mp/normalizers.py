"""Run under torchrun (2 procs, gloo). Each rank feeds its own data to the upstream normalizers (rl_games
RunningMeanStd, skrl RunningStandardScaler) and to ours; writes each rank's resulting statistics to JSON."""

import json

import torch

from fleetlab.distributed import RunContext
from fleetlab.distributed.torch_pg import group_made_by_run_context

ctx = RunContext.from_env(distributed=True, device="cpu").init_process_group()
with group_made_by_run_context("cpu"):
    from rl_games.algos_torch.running_mean_std import RunningMeanStd
    from skrl.resources.preprocessors.torch import RunningStandardScaler

    from fleetlab.rl.rl_games.agent import SyncedRunningMeanStd
    from fleetlab.rl.skrl.torch_backend import SyncedRunningStandardScaler

torch.manual_seed(ctx.rank)
data = torch.randn(256, 3) * (1 + ctx.rank) + 10 * ctx.rank  # the ranks see very different observations
out = {"rank": ctx.rank, "data": data.tolist()}
for name, module in {
    "rl_games_upstream": RunningMeanStd((3,)),
    "rl_games_synced": SyncedRunningMeanStd((3,)),
    "skrl_upstream": RunningStandardScaler(3),
    "skrl_synced": SyncedRunningStandardScaler(3),
}.items():
    module.train()
    if name.startswith("skrl"):
        module(data, train=True)
        mean, var = module.running_mean, module.running_variance
    else:
        module(data)
        mean, var = module.running_mean, module.running_var
    out[name] = {"mean": mean.tolist(), "var": var.tolist()}
with open(f"norm_{ctx.rank}.json", "w") as f:
    json.dump(out, f)
