"""fleetlab's functional core (envs/core.py: reset/step of ONE env, with auto-reset and time-outs) as a Brax `Env`,
so that Brax's PPO trainer steps our physics inside its own XLA program, with no torch and no Python per step."""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
from brax.envs.base import State

# per env, summed over the episodes that ended since the last report: [episodes, return, length, terminated,
# time_out, then each weighted reward term, then how many each termination term ended]; and `overflow`, the steps
# that MuJoCo Warp's buffers overflowed in
STAT_NAMES = ("episodes", "return", "length", "terminated", "time_out", "overflow")


class BraxEnv:
    """Brax's Env API (reset(rng) -> State, step(State, action) -> State, observation_size, action_size) on one
    fleetlab env. Our core resets ended episodes itself and tells time-outs from failures, so the only Brax wrapper
    it needs is the vmap (`VmapOnly`), not Brax's EpisodeWrapper / AutoResetWrapper."""

    backend = "mjx"

    def __init__(self, core):
        # Brax steps the physics inside one XLA loop: MuJoCo Warp's graph mode for that (Physics.for_one_xla_loop)
        self.core = core.with_physics(core.physics.for_one_xla_loop())
        self.observation_size = core.num_obs
        self.action_size = core.num_actions
        self.reward_names, self.termination_names = core.reward_names, core.terminations.names
        self.stat_names = [*STAT_NAMES, *self.reward_names, *self.termination_names]
        # the policy group only (a critic group rides behind it in the core's flat obs)
        self._policy = slice(0, core.num_obs) if core.num_obs < core.observations.size else slice(None)

    def reset(self, rng: jax.Array, spread: jax.Array | None = None) -> State:
        inner = self.core.init(rng, spread)  # startup events too (per-env model entries); spread: terrain columns
        zero = jnp.zeros((), jnp.float32)
        metrics = {"steps": jnp.zeros((), jnp.int32), "episode_stats": jnp.zeros(len(self.stat_names), jnp.float32)}
        return State(pipeline_state=inner, obs=inner.obs[self._policy], reward=zero, done=zero, metrics=metrics,
                     info=self._info(inner))

    def step(self, state: State, action: jax.Array) -> State:
        inner = self.core.step(state.pipeline_state, action)
        done = inner.terminated | inner.truncated
        length = (state.pipeline_state.episode_length + 1) * done
        ended = jnp.concatenate([jnp.stack([done, inner.ended_terms.sum(), length, inner.terminated, inner.truncated,
                                            inner.overflow > 0]).astype(jnp.float32), inner.ended_terms,
                                 inner.step_log[:len(self.termination_names)]])
        metrics = {"steps": state.metrics["steps"] + 1, "episode_stats": state.metrics["episode_stats"] + ended}
        return state.replace(pipeline_state=inner, obs=inner.obs[self._policy], reward=inner.reward,
                             done=done.astype(jnp.float32), metrics=metrics, info=self._info(inner))

    @staticmethod
    def _info(inner) -> dict:
        # Brax's PPO reads these after every step. A time-out is `time_out` (bootstrap_on_timeout adds gamma * V(s)
        # to its reward, as rsl_rl does; brax_agents sets it) and not `truncation` (Brax's default, which would
        # zero that step's advantage instead); the episode fields feed only Brax's optional metric logger.
        done = (inner.terminated | inner.truncated).astype(jnp.float32)
        return {"truncation": jnp.zeros((), jnp.float32), "time_out": inner.truncated.astype(jnp.float32),
                "episode_done": done, "episode_metrics": {}}


class VmapOnly:
    """The `wrap_env_fn` of Brax's PPO (called as wrap(env, episode_length=, action_repeat=, randomization_fn=)):
    a batch of envs, and the episode statistics. Every `report_every` env steps (one rollout) the statistics are
    summed over this device's envs and over every device of every process (a psum inside Brax's pmap), handed to
    `sink` on the host, and zeroed. Brax's own alternative (log_training_metrics) copies every env's episode
    metrics of every step to the host."""

    def __init__(self, env: BraxEnv, report_every: int, sink: Callable, **_brax_wrapper_kwargs):
        self.env, self.report_every, self.sink = env, report_every, sink
        self.observation_size, self.action_size, self.backend = env.observation_size, env.action_size, env.backend

    def reset(self, rng: jax.Array) -> State:
        count = rng.shape[0]  # this device's envs: each its place in the batch (terrain columns)
        return jax.vmap(self.env.reset)(rng, jnp.arange(count, dtype=jnp.float32) / count)

    def step(self, state: State, action: jax.Array) -> State:
        state = jax.vmap(self.env.step)(state, action)

        def report(stats):
            jax.debug.callback(self.sink, jax.lax.psum(stats.sum(0), "i"))  # "i": the axis of Brax's pmap
            return jnp.zeros_like(stats)

        stats = state.metrics["episode_stats"]
        stats = jax.lax.cond(state.metrics["steps"][0] % self.report_every == 0, report, lambda s: s, stats)
        return state.replace(metrics={**state.metrics, "episode_stats": stats})
