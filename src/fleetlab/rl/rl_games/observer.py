"""rl_games' episode statistics over every rank: its returns and lengths, and the env's Episode_Reward/* and
Episode_Termination/* (what rsl_rl logs in fleetlab)."""

from __future__ import annotations

import torch
from rl_games.common.algo_observer import AlgoObserver

from fleetlab.distributed import RunContext, pooled_over_ranks


class EpisodeLogObserver(AlgoObserver):
    """Upstream's agent logs rewards/* and episode_lengths/* from rank 0's own envs, and its default observer
    logs nothing of the env's extras. This observer keeps the env's per-step extras["log"] rows (on the device)
    on every rank; `pool`, which the agent calls on every rank after each epoch, averages them and the reward and
    length meters over all ranks; rank 0 then writes them as upstream writes its own."""

    def __init__(self, ctx: RunContext):
        super().__init__()
        self.ctx = ctx
        self.rows: list = []
        self.pooled: dict[str, float] = {}

    def after_init(self, algo):
        self.algo = algo

    def process_infos(self, infos, done_indices):
        if isinstance(infos, dict) and "log" in infos:
            self.rows.append(infos["log"].values)

    def pool(self) -> None:
        samples = {}
        if self.rows:
            rows = torch.stack([torch.as_tensor(r) for r in self.rows]).cpu().numpy()
            names = self.algo.vec_env.env.log_names
            samples = {name: rows[:, i].tolist() for i, name in enumerate(names)}
        self.rows.clear()
        self.pooled = pooled_over_ranks(self.ctx, samples)
        if self.ctx.is_distributed:
            for meter in (self.algo.game_rewards, self.algo.game_shaped_rewards, self.algo.game_lengths):
                pool_meter(self.ctx, meter)

    def after_print_stats(self, frame, epoch_num, total_time):  # rank 0
        for key, value in self.pooled.items():
            self.algo.writer.add_scalar(key, value, epoch_num)


def pool_meter(ctx: RunContext, meter) -> None:
    """Set an rl_games AverageMeter (a running mean of this rank's last episodes) to the mean over every rank's,
    weighted by each rank's episode count, on every rank."""
    parts = ctx.all_gather_object((meter.mean.cpu().numpy(), meter.current_size))
    total = sum(size for _, size in parts)
    if total:
        mean = sum(m * size for m, size in parts) / total
        meter.mean = torch.as_tensor(mean, dtype=meter.mean.dtype, device=meter.mean.device)
        meter.current_size = min(total, meter.max_size)
