"""The functional env core, in the style of Brax's envs/base.py: `init(key) -> State` (Brax's reset),
`step(State, action) -> State`.

Both functions act on ONE env and are pure; the VecEnv shell vmaps and jits them. `step` auto-resets an env whose
episode ended, as Brax and Isaac Lab do, so the returned obs of a done env is already its next episode's first obs
while reward/terminated/truncated describe the step that ended it.

A task is a ManagerBasedRLEnvCfg (envs/cfg.py); the managers (envs/managers/) turn its terms into the pieces of the
step, in the order envs/term_env.py gives. The State's structure follows from the config: `episode` holds each
manager's per-episode slice (the last action, command states, sensor times, observation histories, interval
timers), `persistent` what outlives an episode (model fields drawn per env, curriculum values).
"""

from __future__ import annotations

import copy
import dataclasses
import functools

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import ManagerBasedRLEnvCfg
from fleetlab.envs.managers import (
    ActionManager,
    CommandManager,
    CurriculumManager,
    EventManager,
    MetricManager,
    ObservationManager,
    RewardManager,
    SensorManager,
    TerminationManager,
)
from fleetlab.envs.scene import Scene
from fleetlab.envs.term_env import TermEnv
from fleetlab.envs.terrain_tiles import LEVEL_TERM, TerrainTiles
from fleetlab.errors import FleetlabError
from fleetlab.sim import load_model, load_physics
from fleetlab.sim.mjx import Physics
from fleetlab.terrains import generate
from fleetlab.terrains.mjcf import add_terrain


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    """Everything one env carries between steps. Kept small on purpose: every leaf crosses the jit boundary."""

    qpos: jax.Array
    qvel: jax.Array
    obs: jax.Array  # every observation group, flat, "policy" first (Env.obs_layout)
    reward: jax.Array
    terminated: jax.Array  # failure: no bootstrap
    truncated: jax.Array  # time-out: bootstrap from the value
    episode_length: jax.Array
    episode_terms: jax.Array  # running sum of each weighted reward term in this episode
    ended_terms: jax.Array  # the sums of the episode that ended at this step (zeros if none ended)
    step_log: jax.Array  # this step's termination terms that fired, then the metric terms (Env.step_log_names)
    key: jax.Array
    overflow: jax.Array  # sticky: non-zero once a physics buffer overflowed (MuJoCo Warp); VecEnv raises on it
    episode: dict = dataclasses.field(default_factory=dict)  # the managers' per-episode state
    persistent: dict = dataclasses.field(default_factory=dict)  # per-env model fields and curriculum values

    def replace(self, **changes) -> "State":
        return dataclasses.replace(self, **changes)


# MJX Data fields that hold state, not kinematics: an observation that reads only these needs no mjx.forward at a
# reset (the reset branch is computed for every env on every step, so it must stay cheap)
_FORWARD_FREE = {"qpos", "qvel", "ctrl", "act", "time", "qacc", "qfrc_applied", "xfrc_applied", "mocap_pos",
                 "mocap_quat", "_impl", "_impl.cfrc_ext", "_impl.cfrc_int"}
_BODY_FORCES = {"_impl.cfrc_ext", "_impl.cfrc_int"}


class _Reads:
    """mjx.Data that records which fields the terms read while they are traced at build time."""

    def __init__(self, data, seen: set, prefix: str = ""):
        self._data, self._seen, self._prefix = data, seen, prefix

    def __getattr__(self, name):
        self._seen.add(self._prefix + name)
        value = getattr(self._data, name)
        return _Reads(value, self._seen, "_impl.") if name == "_impl" else value


def _terrain_impl(impl: str, where: str) -> str:
    """A height-field terrain steps on MJX's JAX implementation. MuJoCo Warp as mujoco-mjx 3.17 vendors it launches
    robots off height fields: Go1s under random actions on the rough terrains flew off at > 8 m/s in 20 of 120
    episodes on Warp, in none on the JAX implementation (0 of 120) or MuJoCo's C engine (0 of 80), with sphere or
    capsule feet, any solver or CCD iteration count (docs/terrain.md). "auto" picks JAX; "warp" is refused."""
    if impl == "warp":
        raise FleetlabError(f"{where}: its height-field terrain is unstable on MuJoCo Warp (mujoco-mjx 3.17: robots "
                            "are launched off the terrain, see docs/terrain.md); use --physics_impl jax")
    return "jax" if impl == "auto" else impl


class Env:
    """The pure functional env of one task config on one physics model."""

    def __init__(self, cfg: ManagerBasedRLEnvCfg, task_id: str = "task", *, device: str = "cpu",
                 impl: str | None = None, num_envs: int = 1):
        """`impl`: the MJX implementation, if not the config's physics.impl."""
        if not isinstance(cfg, ManagerBasedRLEnvCfg):
            raise FleetlabError(f"task '{task_id}': its config is a {type(cfg).__name__}, not a ManagerBasedRLEnvCfg")
        self.cfg = cfg
        self.task_id = task_id
        where = f"task '{task_id}'"
        terrain = generate(cfg.scene.terrain.terrain_generator) if cfg.scene.terrain else None
        edit = functools.partial(add_terrain, terrain=terrain, floor_geom=cfg.scene.terrain.floor_geom,
                                 where=where) if terrain else None
        mj_model = load_model(cfg.scene.xml_path, where, edit)
        mj_model.opt.timestep = cfg.scene.sim_dt
        self.scene = scene = Scene(cfg.scene, mj_model, task_id, cfg.scene.decimation, terrain)
        self.tiles = TerrainTiles(cfg.scene.terrain, terrain, LEVEL_TERM in cfg.curriculum) if terrain else None
        self.actions = ActionManager(cfg.actions, scene)  # before MJX copies the model: it may set the PD gains
        self.sensors = SensorManager(cfg.sensors, scene)  # before the terms: SensorBodies params select from it
        self.commands = CommandManager(cfg.commands, scene)
        self.events = EventManager(cfg.events, scene)
        self.observations = ObservationManager(cfg.observations, scene)
        self.rewards = RewardManager(cfg.rewards, scene, cfg.reward_scale_by_dt)
        self.terminations = TerminationManager(cfg.terminations, scene)
        self.metrics = MetricManager(cfg.metrics, scene, cfg.success)
        self.curriculum = CurriculumManager(cfg.curriculum, scene)
        impl = cfg.physics.impl if impl is None else impl
        if terrain is not None:
            impl = _terrain_impl(impl, where)
        physics = load_physics(mj_model, sim_dt=cfg.scene.sim_dt, decimation=cfg.scene.decimation, device=device,
                               impl=impl, num_envs=num_envs,
                               options=cfg.physics, where=where)
        self.num_actions = self.actions.num_actions
        self.max_episode_length = int(round(cfg.episode_length_s / scene.dt))
        self.needs_forward, self.needs_body_forces = self._check_terms(physics)
        self.physics = physics.with_body_forces() if self.needs_body_forces else physics
        self.dt = self.physics.dt
        self.reward_names = self.rewards.names
        self.obs_layout = self.observations.layout
        self.num_obs = self.observations.group_slice("policy").stop
        self.step_log_names = ([f"Episode_Termination/{n}" for n in self.terminations.names]
                               + [f"Metrics/{n}" for n in self.metrics.names])

    def with_physics(self, physics: Physics) -> "Env":
        """This env stepping another Physics of the same model (Brax's fused-loop graph mode)."""
        env = copy.copy(self)
        env.physics = physics.with_body_forces() if self.needs_body_forces else physics
        return env

    # -- build-time checks ---------------------------------------------------------------------------------------

    def _check_terms(self, physics: Physics) -> tuple[bool, bool]:
        """Trace every term once on a sample env: signatures, output shapes and dtypes, observation sizes, the model
        fields events draw per env. Returns (a reset needs mjx.forward, a step needs the body forces), from the
        Data fields the observation terms and all terms read."""
        read_by_obs, read_by_all = set(), set()
        zeros = jnp.zeros(self.num_actions, jnp.float32)
        _, readings = self.sensors.reset()
        env = TermEnv(scene=self.scene, data=_Reads(physics.template, read_by_all), model=physics.model, action=zeros,
                      prev_action=zeros, prev_qpos=physics.template.qpos, prev_qvel=physics.template.qvel,
                      episode_length=jnp.zeros((), jnp.int32), max_episode_length=self.max_episode_length,
                      commands={}, sensors=readings, curriculum=self.curriculum.initial(),
                      terminated=jnp.zeros((), bool), key=jax.random.PRNGKey(0), env_origin=jnp.zeros(3, jnp.float32))
        self.commands.check(env)
        env = env.replace(commands=self.commands.reset(env, [env.key] * self.commands.num_keys))
        self.events.check(env)
        self.observations.check(env.replace(data=_Reads(physics.template, read_by_obs)))
        for manager in (self.rewards, self.terminations, self.metrics, self.curriculum):
            manager.check(env)
        read_by_all |= read_by_obs
        needs_forward = bool(read_by_obs - _FORWARD_FREE)
        return needs_forward, bool(read_by_all & _BODY_FORCES) or self.sensors.reads_body_forces

    # -- the pure functions ----------------------------------------------------------------------------------------

    def _model(self, persistent: dict):
        return self.events.model_with(self.physics.model, persistent["model"])

    def _made(self) -> dict:
        """`persistent` of an env before its startup events: no model entries, the curricula's initial values."""
        return {"model": {}, "curriculum": self.curriculum.initial()}

    def init(self, key: jax.Array, spread: jax.Array | None = None) -> State:
        """An env as made: its terrain tile is chosen (`spread`: its place in the batch, index / count, so a batch
        covers every column), its startup events draw its model fields, then its first episode starts."""
        persistent = self._made()
        if self.tiles is not None:
            persistent["terrain"] = self.tiles.initial(jax.random.fold_in(key, 4), spread)
            if self.tiles.follows_curriculum:
                level = persistent["terrain"]["level"].astype(jnp.float32)
                persistent["curriculum"] = {**persistent["curriculum"], LEVEL_TERM: level}
        if self.events.model_fields:
            env = self._sample_env(persistent)
            # its own stream: the reset draws stay those of a task without startup events
            persistent["model"] = self.events.startup(env, jax.random.fold_in(key, 2))
        return self.reset(key, persistent)

    def term_env(self, qpos, qvel, **changes) -> TermEnv:
        """What a term sees at this state (kinematics computed; contact forces zero), with `changes` (action=...,
        commands=..., sensors=...): for testing a term by hand."""
        persistent = self._made()
        data = self.physics.forward(self.physics.data(jnp.asarray(qpos, jnp.float32), jnp.asarray(qvel, jnp.float32)))
        return self._sample_env(persistent, data).replace(**changes)

    def _sample_env(self, persistent: dict, data=None, **changes) -> TermEnv:
        zeros = jnp.zeros(self.num_actions, jnp.float32)
        data = self.physics.template if data is None else data
        return TermEnv(scene=self.scene, data=data, model=self._model(persistent), action=zeros, prev_action=zeros,
                       prev_qpos=data.qpos, prev_qvel=data.qvel, episode_length=jnp.zeros((), jnp.int32),
                       max_episode_length=self.max_episode_length, commands={}, sensors={},
                       curriculum=persistent["curriculum"], terminated=jnp.zeros((), bool), key=None,
                       env_origin=self._origin(persistent), **changes)

    def _origin(self, persistent: dict) -> jax.Array:
        if self.tiles is None or "terrain" not in persistent:
            return jnp.zeros(3, jnp.float32)
        return self.tiles.origin(persistent["terrain"])

    def reset(self, key: jax.Array, persistent: dict) -> State:
        """A new episode of an env whose model entries and curriculum values are `persistent`: the reset events on
        the default state, fresh commands, sensors and histories. (`init` makes an env; `step` calls this.)"""
        key, reset_key = jax.random.split(key)
        n_events, n_commands = self.events.num_reset_keys, self.commands.num_keys
        n_timers, n_obs = self.events.num_step_keys, self.observations.num_keys
        count = n_events + n_commands + n_timers + n_obs
        # one key for each consumer; a task with one gets the reset key itself (the streams it always had)
        keys = [reset_key] if count == 1 else list(jax.random.split(reset_key, count)) if count else []
        qpos = jnp.asarray(self.scene.default_qpos, jnp.float32)
        qvel = jnp.zeros(self.scene.mj_model.nv, jnp.float32)
        env = self._sample_env(persistent)
        model, qpos, qvel = self.events.reset(env, keys[:n_events], self.physics, persistent["model"], qpos, qvel)
        persistent = {**persistent, "model": model}
        data = self.physics.data(qpos, qvel)
        if self.needs_forward:
            data = self.physics.forward(data)
        sensor_state, readings = self.sensors.reset()
        env = self._sample_env(persistent, data).replace(sensors=readings)
        commands = self.commands.reset(env, keys[n_events:n_events + n_commands])
        env = env.replace(commands=commands)
        timers = self.events.reset_timers(keys[n_events + n_commands:n_events + n_commands + n_timers])
        obs, history = self.observations.compute(env, {}, keys[-1] if n_obs else None, reset=True)
        zeros = jnp.zeros(len(self.reward_names), jnp.float32)
        return State(
            qpos=data.qpos,
            qvel=data.qvel,
            obs=obs.astype(jnp.float32),
            reward=jnp.zeros((), jnp.float32),
            terminated=jnp.zeros((), bool),
            truncated=jnp.zeros((), bool),
            episode_length=jnp.zeros((), jnp.int32),
            episode_terms=zeros,
            ended_terms=zeros,
            step_log=jnp.zeros(len(self.step_log_names), jnp.float32),
            key=key,
            overflow=jnp.zeros((), jnp.int32),
            episode={"last_action": env.action, "commands": commands, "sensors": sensor_state, "history": history,
                     "timers": timers},
            persistent=persistent,
        )

    def step(self, state: State, action: jax.Array) -> State:
        episode, persistent = state.episode, state.persistent
        model = self._model(persistent)
        data = self.physics.advance(self.physics.data(state.qpos, state.qvel), self.actions.ctrl(action),
                                    model if persistent["model"] else None)
        if self.needs_body_forces:
            data = self.physics.body_forces(data)
        length = state.episode_length + 1
        sensor_state, readings = self.sensors.update(data, episode["sensors"])
        env = TermEnv(scene=self.scene, data=data, model=model, action=action, prev_action=episode["last_action"],
                      prev_qpos=state.qpos, prev_qvel=state.qvel, episode_length=length,
                      max_episode_length=self.max_episode_length, commands=episode["commands"], sensors=readings,
                      curriculum=persistent["curriculum"], terminated=jnp.zeros((), bool), key=None,
                      env_origin=self._origin(persistent))
        terminated, truncated, fired = self.terminations.compute(env)
        env = env.replace(terminated=terminated)
        weighted = self.rewards.compute(env)
        metrics = self.metrics.compute(env)
        episode_terms = state.episode_terms + weighted
        done = terminated | truncated

        n_commands, n_events, n_obs = self.commands.num_keys, self.events.num_step_keys, self.observations.num_keys
        count = n_commands + n_events + n_obs
        # its own stream, folded out of the key the next reset will split: the reset draws stay as they are
        keys = list(jax.random.split(jax.random.fold_in(state.key, 1), count)) if count else []
        commands = self.commands.step(env, keys[:n_commands])
        env = env.replace(commands=commands)
        timers, model_fields, qpos, qvel = self.events.interval(
            env, episode["timers"], keys[n_commands:n_commands + n_events], self.physics, persistent["model"],
            data.qpos, data.qvel)
        obs, history = self.observations.compute(env, episode["history"], keys[-1] if n_obs else None, reset=False)
        # its own stream (3): a terrain level past the top row moves to a random one
        curriculum = self.curriculum.update(env.replace(key=jax.random.fold_in(state.key, 3)),
                                            persistent["curriculum"], done)
        persistent = {**persistent, "model": model_fields, "curriculum": curriculum}
        if self.tiles is not None:
            persistent["terrain"] = self.tiles.after_curriculum(persistent["terrain"], curriculum)

        fresh = self.reset(state.key, persistent)
        keep = lambda new, old: jnp.where(done, new, old)  # noqa: E731
        return State(
            qpos=keep(fresh.qpos, qpos),
            qvel=keep(fresh.qvel, qvel),
            obs=keep(fresh.obs, obs.astype(jnp.float32)),
            reward=weighted.sum(),
            terminated=terminated,
            truncated=truncated,
            episode_length=keep(0, length),
            episode_terms=keep(fresh.episode_terms, episode_terms),
            ended_terms=keep(episode_terms, jnp.zeros_like(episode_terms)),
            step_log=jnp.concatenate([fired, metrics]),
            key=fresh.key,
            overflow=state.overflow | self.physics.overflow(data),
            episode=jax.tree_util.tree_map(keep, fresh.episode,
                                           {"last_action": action, "commands": commands, "sensors": sensor_state,
                                            "history": history, "timers": timers}),
            persistent=jax.tree_util.tree_map(keep, fresh.persistent, persistent),
        )


__all__ = ["Env", "State"]
