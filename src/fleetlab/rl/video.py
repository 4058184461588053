"""Videos during training (Isaac Lab's --video --video_interval N --video_length L): every N env steps, counted
from the first, global rank 0 replays the policy being trained for L steps on a separate one-env render env and
writes videos/train/step-<N>.mp4.

The training envs never render and are not stepped for the video. The render env is the same task and config on
the CPU with MJX's JAX implementation (built and compiled at the first video); each video costs L policy steps
on it plus L frames of MuJoCo's renderer on rank 0, while the other ranks wait at their next collective."""

from __future__ import annotations

import dataclasses
import os
import time

from fleetlab.envs.registry import make_from_cfg
from fleetlab.rl import evaluation


class TrainingVideos:
    def __init__(self, run, session, run_dir: str, device: str, seed: int):
        self.run, self.session, self.device, self.seed = run, session, device, seed
        self.folder = os.path.join(run_dir, "videos", "train")
        self.interval, self.length = run.video_interval, run.video_length
        self.steps = 0
        self.render_env = None
        self.paths: list[str] = []

    def __call__(self) -> None:
        """A VecEnv step hook: record at env steps 0, N, 2N, ..."""
        step, self.steps = self.steps, self.steps + 1
        if step % self.interval == 0:
            self.record(step)

    def record(self, step: int) -> str:
        import torch

        start = time.perf_counter()
        if self.render_env is None:
            cfg = self.run.env_cfg
            cfg = dataclasses.replace(cfg, physics=dataclasses.replace(cfg.physics, impl="jax"))
            self.render_env = make_from_cfg(cfg, self.run.task.id, 1, "cpu", self.seed)
        policy = self.session.training_policy()
        cuda = [torch.device(self.device).index or 0] if self.device.startswith("cuda") else []
        # rl_games' and skrl's act() sample actions (and return the mean): without the fork the video would
        # draw from torch's RNG and change the training that follows
        with torch.random.fork_rng(devices=cuda):
            path = evaluation.record_video(self.render_env, lambda obs: policy(obs.to(self.device)).cpu(),
                                           os.path.join(self.folder, f"step-{step}.mp4"), self.length)
        self.paths.append(path)
        print(f"[fleetlab] video at env step {step} ({time.perf_counter() - start:.1f} s): {path}", flush=True)
        return path
