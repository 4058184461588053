"""Our VecEnv as rl_games' IVecEnv."""

from __future__ import annotations

import gymnasium
import numpy as np
import torch
from rl_games.common.ivecenv import IVecEnv


class RlGamesVecEnv(IVecEnv):
    """Our VecEnv as rl_games' IVecEnv: obs and actions clipped as Isaac Lab's wrapper does, all on the device."""

    def __init__(self, env, clip_obs: float = np.inf, clip_actions: float = np.inf):
        self.env = env
        self.clip_obs, self.clip_actions = clip_obs, clip_actions

    def _obs(self, groups):
        return {"obs": torch.clamp(groups["policy"], -self.clip_obs, self.clip_obs)}

    def step(self, actions):
        actions = torch.clamp(actions.detach(), -self.clip_actions, self.clip_actions)
        obs, reward, terminated, truncated, extras = self.env.step(actions)
        infos = {"time_outs": truncated, "log": extras["log"]}
        return self._obs(obs), reward, terminated | truncated, infos

    def reset(self):
        # The env was reset when built and auto-resets: a second reset here would overwrite the env RNG state that
        # a resumed run restored, and replay the seed's first episodes.
        return self._obs(self.env.observations)

    def get_number_of_agents(self):
        return 1

    @property
    def observation_space(self):  # read by rl_games' player through env_configurations.get_env_info
        return self.get_env_info()["observation_space"]

    @property
    def action_space(self):
        return self.get_env_info()["action_space"]

    def get_env_info(self):
        high = np.full(self.env.num_obs, self.clip_obs, np.float32)
        act = np.full(self.env.num_actions, self.clip_actions, np.float32)
        return {
            "observation_space": gymnasium.spaces.Box(-high, high, dtype=np.float32),
            "action_space": gymnasium.spaces.Box(-act, act, dtype=np.float32),
            "agents": 1,
            "value_size": 1,
        }
