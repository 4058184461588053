"""What the torch and JAX skrl env wrappers share (they differ only in reset/step; see torch_backend.py and
jax_backend.py, which pair this with skrl's Wrapper of their framework)."""

from __future__ import annotations

import time


class SkrlEnvMixin:
    """What the torch and JAX skrl env wrappers share (they differ only in reset/step): Isaac Lab-style spaces, no
    critic state, and a clock on env steps, giving a training FPS that leaves out the first rollout and update
    (JIT); skrl's trainer reports no FPS of its own."""

    num_envs: int

    def __init__(self, env):
        super().__init__(env)  # skrl's Wrapper, next in the MRO
        self._obs = None
        self._ticks: list[float] = []

    @property
    def observation_space(self):
        return self._unwrapped.single_observation_space["policy"]

    @property
    def action_space(self):
        return self._unwrapped.single_action_space

    @property
    def state_space(self):
        return None

    def state(self):
        return None

    def render(self, *args, **kwargs):
        return None

    def close(self):
        self._env.close()

    def _tick(self) -> None:
        self._ticks.append(time.perf_counter())

    def steady_fps(self, rollouts: int) -> float | None:
        ticks = self._ticks[rollouts:]
        if len(ticks) < 2:
            return None
        return (len(ticks) - 1) * self.num_envs / (ticks[-1] - ticks[0])


