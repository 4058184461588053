"""The functional env core, in the style of Brax's envs/base.py: `reset(key) -> State`, `step(State, action) -> State`.

Both functions act on ONE env and are pure; the VecEnv shell vmaps and jits them. `step` auto-resets an env whose
episode ended, as Brax and Isaac Lab do, so the returned obs of a done env is already its next episode's first obs
while reward/terminated/truncated describe the step that ended it.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Protocol

import jax
import jax.numpy as jnp

from fleetlab.sim import Physics


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    """Everything one env carries between steps. Kept small on purpose: every leaf crosses the jit boundary."""

    qpos: jax.Array
    qvel: jax.Array
    obs: jax.Array
    reward: jax.Array
    terminated: jax.Array  # failure: no bootstrap
    truncated: jax.Array  # time-out: bootstrap from the value
    episode_length: jax.Array
    episode_terms: jax.Array  # running sum of each weighted reward term in this episode
    ended_terms: jax.Array  # the sums of the episode that ended at this step (zeros if none ended)
    key: jax.Array
    overflow: jax.Array  # sticky: non-zero once a physics buffer overflowed (MuJoCo Warp); VecEnv raises on it
    extra: dict = dataclasses.field(default_factory=dict)  # the task's own state (Task.extra_reset), often empty

    def replace(self, **changes) -> "State":
        return dataclasses.replace(self, **changes)


class TaskCfg(Protocol):
    """What the core needs of a task config (a dataclass in tasks/<name>/cfg.py)."""

    xml_path: str
    sim_dt: float
    decimation: int
    episode_length_s: float
    action_scale: float
    num_actions: int
    num_observations: int
    reward_weights: dict[str, float]
    reward_scale_by_dt: bool


@dataclasses.dataclass(frozen=True)
class Task:
    """A task: its config and four pure functions of one env (no hidden state)."""

    cfg: TaskCfg
    reset: Callable  # (cfg, key, physics) -> (qpos, qvel)
    observe: Callable  # (cfg, data, last_action) -> obs
    reward_terms: Callable  # (cfg, data, action, terminated, prev_qpos) -> dict name -> unweighted term
    terminated: Callable  # (cfg, data) -> bool
    # Whether `observe` reads kinematics (xpos, xquat, ...). Then a reset runs mjx.forward; cartpole and the
    # locomotion tasks read only qpos/qvel and skip it, since the reset branch is computed for every env on every step.
    observe_needs_forward: bool = False
    # Whether `observe` reads data.cfrc_int (the wrench each body gets from its parent, Isaac Lab's
    # body_incoming_wrench). Then a step runs MJX's post-constraint RNE once, after the last substep.
    observe_needs_body_forces: bool = False
    # Optional per-env success test used by `play` (cfg, State) -> bool, e.g. cartpole's |pole| < 0.2 rad.
    success: Callable | None = None
    success_name: str = ""
    # Optional state the task keeps between steps, a dict of arrays for one env: commands and their timers, feet
    # air times, the previous action, randomized model fields. extra_reset: (cfg, key, physics) -> dict at a reset;
    # extra_step: (cfg, prev State, data, action, key) -> dict after each physics step. With them, terminated,
    # reward_terms and observe also get `extra=` (this step's dict).
    extra_reset: Callable | None = None
    extra_step: Callable | None = None
    # Optional per-env model: (shared mjx.Model, extra) -> the model this env steps with (domain randomization).
    model_of: Callable | None = None
    # Optional play metrics, (cfg, State) -> dict name -> per-env value; play reports their means over env-steps.
    play_metrics: Callable | None = None
    # The name of `terminated` in extras["log"] (Episode_Termination/<name>), e.g. Isaac Lab's base_contact.
    termination_name: str = "terminated"


class Env:
    """The pure functional env for one task on one physics model."""

    def __init__(self, task: Task, physics: Physics):
        self.task = task
        self.cfg = task.cfg
        self.physics = physics
        self.dt = physics.dt
        self.max_episode_length = int(round(self.cfg.episode_length_s / self.dt))
        self.reward_names = tuple(self.cfg.reward_weights)
        scale = self.dt if self.cfg.reward_scale_by_dt else 1.0
        self._weights = jnp.asarray([self.cfg.reward_weights[n] * scale for n in self.reward_names], jnp.float32)

    def reset(self, key: jax.Array) -> State:
        key, reset_key = jax.random.split(key)
        extra = {}
        if self.task.extra_reset is not None:  # a split only here: tasks without extra keep their random streams
            reset_key, extra_key = jax.random.split(reset_key)
            extra = self.task.extra_reset(self.cfg, extra_key, self.physics)
        qpos, qvel = self.task.reset(self.cfg, reset_key, self.physics)
        data = self.physics.data(qpos, qvel)
        if self.task.observe_needs_forward:
            data = self.physics.forward(data)
        zeros = jnp.zeros(len(self.reward_names), jnp.float32)
        no_action = jnp.zeros(self.cfg.num_actions, jnp.float32)
        return State(
            qpos=data.qpos,
            qvel=data.qvel,
            obs=self.task.observe(self.cfg, data, no_action, **self._extra_kw(extra)).astype(jnp.float32),
            reward=jnp.zeros((), jnp.float32),
            terminated=jnp.zeros((), bool),
            truncated=jnp.zeros((), bool),
            episode_length=jnp.zeros((), jnp.int32),
            episode_terms=zeros,
            ended_terms=zeros,
            key=key,
            overflow=jnp.zeros((), jnp.int32),
            extra=extra,
        )

    def _extra_kw(self, extra: dict) -> dict:
        return {"extra": extra} if self.task.extra_reset is not None else {}

    def step(self, state: State, action: jax.Array) -> State:
        model = self.task.model_of(self.physics.model, state.extra) if self.task.model_of is not None else None
        data = self.physics.advance(self.physics.data(state.qpos, state.qvel), action * self.cfg.action_scale, model)
        if self.task.observe_needs_body_forces:
            data = self.physics.body_forces(data)
        extra = state.extra
        if self.task.extra_step is not None:
            # its own stream, folded out of the key the next reset will split: the reset draws stay as they were
            extra = self.task.extra_step(self.cfg, state, data, action, jax.random.fold_in(state.key, 1))
        kw = self._extra_kw(extra)
        length = state.episode_length + 1
        terminated = self.task.terminated(self.cfg, data, **kw)
        # Isaac Lab counts an env that fails on its last step as terminated, not timed out.
        truncated = (length >= self.max_episode_length) & ~terminated
        terms = self.task.reward_terms(self.cfg, data, action, terminated, state.qpos, **kw)
        weighted = jnp.stack([terms[n] for n in self.reward_names]).astype(jnp.float32) * self._weights
        episode_terms = state.episode_terms + weighted
        done = terminated | truncated
        obs = self.task.observe(self.cfg, data, action, **kw).astype(jnp.float32)

        fresh = self.reset(state.key)
        keep = lambda new, old: jnp.where(done, new, old)  # noqa: E731
        return State(
            qpos=keep(fresh.qpos, data.qpos),
            qvel=keep(fresh.qvel, data.qvel),
            obs=keep(fresh.obs, obs),
            reward=weighted.sum(),
            terminated=terminated,
            truncated=truncated,
            episode_length=keep(0, length),
            episode_terms=keep(fresh.episode_terms, episode_terms),
            ended_terms=keep(episode_terms, jnp.zeros_like(episode_terms)),
            key=fresh.key,
            overflow=state.overflow | self.physics.overflow(data),
            extra=jax.tree_util.tree_map(keep, fresh.extra, extra),
        )
