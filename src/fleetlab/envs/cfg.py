"""A task as a config of named terms, in the shape of Isaac Lab's `ManagerBasedRLEnvCfg` (and mjlab's): the scene,
then one dict of named terms per manager. Every term is a pure JAX function of ONE env, called as
`func(env, **params)`, where `env` is the `TermEnv` of the step (envs/term_env.py). What each kind returns:

    observation, reward, termination, metric   a JAX array (obs: 1-D float; the others: a scalar)
    event                                      a dict of replacements: "qpos", "qvel", or a model field's
                                               entries (`ModelEntries`: body_mass[bodies], ...), per env from
                                               then on
    curriculum                                 the term's new value (one per env), run when an episode ends
    command                                    a CommandTerm subclass: sample(env) and update(env, state)

Params that name parts of the model (`Joints`, `Bodies`, `Geoms`, `Sites`, `SensorBodies`) are resolved to ids
once, when the env is built; a name the model lacks is a one-line error naming the task and the term.

The configs are frozen dataclasses: `env.rewards.alive.weight=2.0` on the command line replaces a field.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import numpy as np

from fleetlab.checks import existing_file, positive, positive_int
from fleetlab.sim.options import PhysicsOptions
from fleetlab.terrains.cfg import TerrainImporterCfg

MISSING = dataclasses.MISSING


# -- what a term's params may name: parts of the model, found by regular expressions matched in full -------------

@dataclasses.dataclass(frozen=True)
class Entity:
    """Isaac Lab's SceneEntityCfg: the parts of the model of one kind whose names match `names` (regular
    expressions matched in full), in the order of `names` (each one's matches in model order). For `sensor`, the
    bodies of that contact sensor."""

    kind: str  # "joint" (hinge and slide joints: the free root is not one), "body", "geom", "site", "actuator"
    names: tuple = (".*",)
    sensor: str = ""


def Joints(*names: str) -> Entity:  # noqa: N802  (reads as a type in a config, as Isaac Lab's cfg classes do)
    return Entity("joint", names or (".*",))


def Bodies(*names: str) -> Entity:  # noqa: N802
    return Entity("body", names or (".*",))


def Geoms(*names: str) -> Entity:  # noqa: N802
    return Entity("geom", names or (".*",))


def Sites(*names: str) -> Entity:  # noqa: N802
    return Entity("site", names or (".*",))


def SensorBodies(sensor: str, *names: str) -> Entity:  # noqa: N802
    return Entity("body", names or (".*",), sensor=sensor)


@dataclasses.dataclass(frozen=True)
class ModelEntries:
    """What an event sets of one MJX model field: field[index] = values, for this env. `index` is static (numpy
    indices known when the env is built, e.g. (body_ids,) or (geom_ids, 0)): the env keeps only these values per
    env, and the entries no event names stay the shared model's constants, which XLA folds into the step."""

    index: tuple
    values: object

    def __post_init__(self):
        # hashable (ints and tuples of ints): JAX traces it as static data of the pytree
        index = tuple(tuple(int(x) for x in np.ravel(i)) if np.ndim(i) else int(i) for i in self.index)
        object.__setattr__(self, "index", index)

    @property
    def np_index(self) -> tuple:
        return tuple(np.asarray(i) if isinstance(i, tuple) else i for i in self.index)


jax.tree_util.register_dataclass(ModelEntries, data_fields=["values"], meta_fields=["index"])


# -- the scene --------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SceneCfg:
    """The MJCF and how it is stepped. The default state is the MJCF's qpos0, with these replacements."""

    xml_path: str = dataclasses.field(default="", metadata={"check": existing_file})
    sim_dt: float = dataclasses.field(default=0.005, metadata={"check": positive})
    decimation: int = dataclasses.field(default=4, metadata={"check": positive_int})  # physics steps per policy step
    # joint name regex -> rad (Isaac Lab's init_state.joint_pos)
    default_joint_pos: dict = dataclasses.field(default_factory=dict)
    init_root_pos: tuple | None = None  # (x, y, z) of a free root joint; None: the MJCF's
    # the ground: None keeps the MJCF's; a TerrainImporterCfg puts generated terrain in place of its floor plane,
    # and every env's root starts at its tile's origin (fleetlab.terrains)
    terrain: TerrainImporterCfg | None = None


# -- actions ----------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class JointEffortAction:
    """ctrl = scale x action, for the actuators that drive `joints` (motors: ctrl is a force or torque, times gear)."""

    joints: Entity = dataclasses.field(default_factory=Joints)
    scale: float = 1.0


@dataclasses.dataclass(frozen=True)
class JointPositionAction:
    """Joint position targets: target = default joint position (if use_default_offset) + scale x action, for the
    actuators that drive `joints`. With `stiffness` set, those actuators become the explicit PD
    torque = stiffness x (target - q) - damping x qdot (clamped to their force range), whatever the MJCF said;
    without, the MJCF's actuators must already take a position target (MuJoCo's <position>)."""

    joints: Entity = dataclasses.field(default_factory=Joints)
    scale: float = 1.0
    use_default_offset: bool = True
    stiffness: float | None = None
    damping: float = 0.0


# -- observations -----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class UniformNoise:
    """Isaac Lab's Unoise: obs + U(n_min, n_max), independently per element."""

    n_min: float = -1.0
    n_max: float = 1.0


@dataclasses.dataclass(frozen=True)
class GaussianNoise:
    """Isaac Lab's Gnoise: obs + N(mean, std^2), independently per element."""

    mean: float = 0.0
    std: float = 1.0


@dataclasses.dataclass(frozen=True)
class ObsTerm:
    """One observation term. Applied in Isaac Lab's order: func, noise (when the group is corrupted), clip, scale;
    then a history of the last `history_length` values (oldest first, flattened; filled with the first value at a
    reset)."""

    func: Callable
    params: dict = dataclasses.field(default_factory=dict)
    noise: UniformNoise | GaussianNoise | None = None
    clip: tuple | None = None
    scale: float | None = None
    history_length: int = 0


@dataclasses.dataclass(frozen=True)
class ObsGroup:
    """A group of observation terms (`policy`; `critic` for an asymmetric actor-critic). concatenate_terms: one
    vector in term order, else a dict of the terms. enable_corruption: apply the terms' noise (off to play)."""

    terms: dict = dataclasses.field(default_factory=dict)
    concatenate_terms: bool = True
    enable_corruption: bool = True


# -- the other managers' terms ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class RewTerm:
    """weight x func(env, **params), times the policy dt when the task's reward_scale_by_dt (Isaac Lab's rule)."""

    func: Callable
    weight: float
    params: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class DoneTerm:
    """Ends the episode where func is true. time_out: a truncation (the value bootstraps), else a failure. Each
    term's count is logged as Episode_Termination/<name>."""

    func: Callable
    params: dict = dataclasses.field(default_factory=dict)
    time_out: bool = False


EVENT_MODES = ("startup", "reset", "interval")


@dataclasses.dataclass(frozen=True)
class EventTerm:
    """startup: once per env when the envs are made; reset: at each episode start; interval: every
    U(interval_range_s) seconds of each env's episode. func returns the replacements (see the module docstring)."""

    func: Callable
    mode: str
    params: dict = dataclasses.field(default_factory=dict)
    interval_range_s: tuple | None = None


@dataclasses.dataclass(frozen=True)
class CommandTerm:
    """A command generator (Isaac Lab's CommandTerm). Its state (a dict of arrays of one env, at least "command") is
    drawn by `sample` at a reset and whenever U(resampling_time_range) seconds have passed; `update` runs every
    step after that (heading control, for one). Subclasses are the config and the code, as Isaac Lab's
    cfg + class_type pairs are."""

    resampling_time_range: tuple = (10.0, 10.0)

    def sample(self, env) -> dict:
        raise NotImplementedError

    def update(self, env, state: dict) -> dict:
        return state


@dataclasses.dataclass(frozen=True)
class CurrTerm:
    """A value per env (a terrain level, a command range), `initial` at the start, replaced by func(env, **params)
    when the env's episode ends; logged as Curriculum/<name> (its mean over the envs)."""

    func: Callable
    initial: float = 0.0
    params: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ContactSensorCfg:
    """Isaac Lab's ContactSensor on `bodies`: each body's net contact force from the world (world frame, after the
    policy step's last physics step), contact where its norm exceeds `threshold` N, and the air and contact times
    of each body (track_air_time)."""

    bodies: Entity = dataclasses.field(default_factory=Bodies)
    threshold: float = 1.0
    track_air_time: bool = True


@dataclasses.dataclass(frozen=True)
class MetricTerm:
    """A per-env value `play` reports (its mean over env-steps) and training logs as Metrics/<name>; computed on
    the data the reward terms get."""

    func: Callable
    params: dict = dataclasses.field(default_factory=dict)
    description: str = ""


# -- the task ---------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ManagerBasedRLEnvCfg:
    """A task. Observation and action sizes follow from the terms and the model; nothing is written twice."""

    scene: SceneCfg = dataclasses.field(default_factory=SceneCfg)
    physics: PhysicsOptions = dataclasses.field(default_factory=PhysicsOptions)  # MJX implementation, Warp settings
    episode_length_s: float = dataclasses.field(default=20.0, metadata={"check": positive})
    reward_scale_by_dt: bool = True  # Isaac Lab multiplies every reward term by the policy dt
    actions: dict = dataclasses.field(default_factory=dict)
    observations: dict = dataclasses.field(default_factory=dict)  # group name -> ObsGroup; "policy" is required
    commands: dict = dataclasses.field(default_factory=dict)
    events: dict = dataclasses.field(default_factory=dict)
    rewards: dict = dataclasses.field(default_factory=dict)
    terminations: dict = dataclasses.field(default_factory=dict)
    curriculum: dict = dataclasses.field(default_factory=dict)
    sensors: dict = dataclasses.field(default_factory=dict)
    metrics: dict = dataclasses.field(default_factory=dict)
    success: str = ""  # the name of a boolean metric: play reports the fraction of env-steps where it holds

    def replace(self, **changes) -> "ManagerBasedRLEnvCfg":
        return dataclasses.replace(self, **changes)


__all__ = ["ContactSensorCfg", "CommandTerm", "CurrTerm", "DoneTerm", "EVENT_MODES", "Entity", "EventTerm",
           "GaussianNoise", "JointEffortAction", "JointPositionAction", "ManagerBasedRLEnvCfg", "MetricTerm",
           "ModelEntries",
           "ObsGroup", "ObsTerm", "RewTerm", "SceneCfg", "UniformNoise", "Bodies", "Geoms", "Joints", "SensorBodies",
           "Sites"]
