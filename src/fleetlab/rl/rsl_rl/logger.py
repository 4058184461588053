"""rsl_rl's Logger with every rank's episodes in the statistics and no host sync per env step."""

from __future__ import annotations

import statistics
from collections import deque
from typing import Callable

import torch
from rsl_rl.utils.logger import Logger

from fleetlab.distributed import RunContext, all_reduce_sum, nanmean_over_ranks
from fleetlab.envs.vec_env import LazyLog
from fleetlab.rl.console import Progress


class SyncedLogger(Logger):
    """Upstream logs episode statistics of rank 0's envs only, and FPS as rank 0's FPS times the world size.
    This logger collects on every rank, all-reduces the episode statistics over ALL ranks and sums the FPS that
    each rank measured; rank 0 writes TensorBoard and prints one console line per iteration."""

    def __init__(self, *args, ctx: RunContext, iteration_end: Callable[[int, int], None], **kwargs):
        super().__init__(*args, **kwargs)
        self.ctx = ctx
        # Upstream's learn() calls nothing else on every rank once per iteration (it saves on rank 0 only), so the
        # runner's checkpoint-and-stop step (RNG states gathered, stop agreed by all ranks) is handed in here.
        self.iteration_end = iteration_end
        self.rewbuffer, self.lenbuffer = deque(maxlen=100), deque(maxlen=100)
        self.progress: Progress | None = None
        self.last: dict = {}
        self.fps_history: list[float] = []
        self.local_fps: list[float] = []  # this rank's own training FPS per iteration (for `fleetlab bench`)
        self.split: list[tuple[float, float]] = []  # (rollout s, PPO update s) per iteration
        self._steps: list[torch.Tensor] = []  # per env step: (ended, return so far, length so far) of every env

    def process_env_step(self, rewards, dones, extras, intrinsic_rewards=None) -> None:
        # Upstream skips this on ranks without a writer (we need every rank's episodes), and it copies the ended
        # episodes to the host at every step (nonzero + .cpu(): two device syncs per step). Here a step only
        # queues device tensors; `_drain` reads them once per iteration.
        if "log" in extras:
            self.ep_extras.append(extras["log"])
        self.cur_reward_sum += rewards
        self.cur_episode_length += 1
        ended = dones > 0
        self._steps.append(torch.stack([ended.float(), self.cur_reward_sum, self.cur_episode_length], 1))
        self.cur_reward_sum.masked_fill_(ended, 0)
        self.cur_episode_length.masked_fill_(ended, 0)

    def _drain(self) -> dict[str, list[float]]:
        """This iteration's ended episodes into the 100-episode buffers, and the env's log rows as samples."""
        if self._steps:
            steps = torch.stack(self._steps).flatten(0, 1)  # (step, env) order, as upstream extends its buffers
            ended = steps[steps[:, 0] > 0].cpu()
            self.rewbuffer.extend(ended[:, 1].tolist())
            self.lenbuffer.extend(ended[:, 2].tolist())
            self._steps.clear()
        samples = {"Train/mean_reward": list(self.rewbuffer), "Train/mean_episode_length": list(self.lenbuffer)}
        if self.ep_extras and all(isinstance(ep, LazyLog) for ep in self.ep_extras):
            rows = torch.stack([ep.values for ep in self.ep_extras]).cpu()  # one read for the whole iteration
            for i, key in enumerate(self.ep_extras[0].names):
                samples[key] = rows[:, i].tolist()
        else:  # plain dicts of scalars (other envs)
            for key in dict.fromkeys(k for ep in self.ep_extras for k in ep):
                samples[key] = [float(ep[key]) for ep in self.ep_extras if key in ep]
        self.ep_extras.clear()
        return samples

    def log(self, it, start_it, total_it, collect_time, learn_time, loss_dict, learning_rate, action_std, rnd_weight,
            **_):
        steps = self.cfg["num_steps_per_env"] * self.num_envs
        fps = float(all_reduce_sum(torch.tensor([steps / (collect_time + learn_time)], device=self.device)).item())
        stats = nanmean_over_ranks(self._drain(), self.device)
        self.tot_timesteps += steps * self.gpu_world_size
        self.tot_time += collect_time + learn_time
        self.fps_history.append(fps)
        self.local_fps.append(steps / (collect_time + learn_time))
        self.split.append((collect_time, learn_time))
        later = self.fps_history[1:] or self.fps_history  # the first iteration carries the JIT compile
        self.last = {"iteration": it, "fps": fps, "fps_median": statistics.median(later), **stats}
        self.iteration_end(it, total_it)
        if self.writer is None:
            return
        for key, value in loss_dict.items():
            self.writer.add_scalar(f"Loss/{key}", value, it)
        self.writer.add_scalar("Loss/learning_rate", learning_rate, it)
        self.writer.add_scalar("Policy/mean_std", action_std.mean().item(), it)
        self.writer.add_scalar("Perf/total_fps", fps, it)
        self.writer.add_scalar("Perf/collection_time", collect_time, it)
        self.writer.add_scalar("Perf/learning_time", learn_time, it)
        for key, value in stats.items():
            self.writer.add_scalar(key if "/" in key else f"Episode/{key}", value, it)
        if self.progress is None:
            self.progress = Progress(total_it, start_it)
        print(
            self.progress.line(
                it, fps, ret=stats.get("Train/mean_reward"), len=stats.get("Train/mean_episode_length"),
                lr=learning_rate,
            ),
            flush=True,
        )
