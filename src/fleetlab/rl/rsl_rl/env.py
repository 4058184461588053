"""Our VecEnv as rsl_rl's VecEnv."""

from __future__ import annotations

import torch
from rsl_rl.env import VecEnv as RslVecEnv
from tensordict import TensorDict


class RslRlVecEnvWrapper(RslVecEnv):
    """Our VecEnv as rsl_rl's VecEnv: TensorDict observations, dones = terminated | truncated."""

    def __init__(self, env):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = env.cfg

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf = value

    def get_observations(self) -> TensorDict:
        return TensorDict(self.env.observations, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        obs, reward, terminated, truncated, extras = self.env.step(actions)
        return TensorDict(obs, batch_size=[self.num_envs]), reward, terminated | truncated, extras
