"""The terms Ant and Humanoid share, as Isaac Lab's classic tasks share `humanoid/mdp`: pure JAX functions of one
env. The robot's root is a free joint (qpos[0:3] position, qpos[3:7] quaternion w,x,y,z; qvel[0:3] world linear
velocity, qvel[3:6] body angular velocity), then its actuated hinge joints in actuator order."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from fleetlab.envs.core import Task
from fleetlab.errors import FleetlabError
from fleetlab.sim.mjx import incoming_wrench


@dataclasses.dataclass(frozen=True)
class LocomotionCfg:
    """Isaac Lab's classic locomotion env config (sim 1/120 s x 2, 16 s episodes, rewards x dt). Subclasses set
    the robot: its MJCF, sizes, term weights and scales."""

    xml_path: str = ""
    sim_dt: float = 1 / 120
    decimation: int = 2
    episode_length_s: float = 16.0
    action_scale: float = 1.0  # the per-joint effort scales are the motors' gears (ctrl in [-1, 1])
    num_actions: int = 0
    num_observations: int = 0
    reward_weights: dict = dataclasses.field(default_factory=dict)
    reward_scale_by_dt: bool = True
    target_pos: tuple = (1000.0, 0.0, 0.0)
    termination_height: float = 0.0  # torso below this ends the episode
    upright_threshold: float = 0.93
    heading_threshold: float = 0.8
    joint_limit_threshold: float = 0.98
    ang_vel_scale: float = 1.0
    joint_vel_scale: float = 0.1
    feet_force_scale: float = 0.01
    feet: tuple = ()  # bodies whose incoming wrench is observed
    default_joint_pos: dict = dataclasses.field(default_factory=dict)  # joint name -> rad (others 0)
    reset_joint_pos_range: tuple = (-0.2, 0.2)  # offsets added to the default joint positions
    reset_joint_vel_range: tuple = (-0.1, 0.1)
    # MuJoCo Warp's buffers per env (None: fleetlab.sim.mjx's defaults, 64 contacts and 512 constraint rows); a
    # step that needs more stops training with an error
    warp_contacts_per_env: int | None = None
    warp_constraints_per_env: int | None = None


@dataclasses.dataclass(frozen=True)
class RobotConsts:
    """What the terms need from the model, read once from the MJCF (numpy, so the config stays hashable)."""

    qpos0: np.ndarray  # the root pose and default joint positions
    joint_lower: np.ndarray
    joint_upper: np.ndarray
    gear_scaled: np.ndarray  # gear / max gear, Isaac Lab's gear_ratio_scaled
    feet: np.ndarray  # body ids

    @staticmethod
    def from_cfg(cfg: LocomotionCfg) -> "RobotConsts":
        m = mujoco.MjModel.from_xml_path(cfg.xml_path)
        joints = m.actuator_trnid[:, 0]
        if m.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE or (m.jnt_type[joints] != mujoco.mjtJoint.mjJNT_HINGE).any():
            raise FleetlabError(f"{cfg.xml_path}: expected a free root joint and one motor per hinge joint")
        if list(m.jnt_qposadr[joints]) != list(range(7, m.nq)):
            raise FleetlabError(f"{cfg.xml_path}: the motors must drive the hinge joints in qpos order")
        qpos0 = m.qpos0.copy()
        for name, value in cfg.default_joint_pos.items():
            qpos0[m.jnt_qposadr[m.joint(name).id]] = value
        gear = m.actuator_gear[:, 0]
        return RobotConsts(
            qpos0=qpos0, joint_lower=m.jnt_range[joints, 0].copy(), joint_upper=m.jnt_range[joints, 1].copy(),
            gear_scaled=gear / gear.max(), feet=np.asarray([m.body(name).id for name in cfg.feet]),
        )


def rotate_inverse(quat: jax.Array, v: jax.Array) -> jax.Array:
    """v (world) expressed in the frame of the unit quaternion quat (w, x, y, z)."""
    w, xyz = quat[0], -quat[1:]
    t = 2.0 * jnp.cross(xyz, v)
    return v + w * t + jnp.cross(xyz, t)


def _rotate(quat: jax.Array, v: jax.Array) -> jax.Array:
    return rotate_inverse(quat * jnp.asarray([1.0, -1.0, -1.0, -1.0]), v)


def _yaw_roll(quat: jax.Array) -> tuple[jax.Array, jax.Array]:
    w, x, y, z = quat
    roll = jnp.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    yaw = jnp.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return yaw, roll


def _wrap(angle: jax.Array) -> jax.Array:
    return jnp.arctan2(jnp.sin(angle), jnp.cos(angle))


def _to_target_xy(cfg: LocomotionCfg, pos: jax.Array) -> jax.Array:
    return jnp.asarray(cfg.target_pos[:2]) - pos[:2]


def _heading_and_up(cfg: LocomotionCfg, qpos: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Isaac Lab's base_heading_proj (forward axis . direction to the target, in the ground plane) and
    base_up_proj (the body's up axis . world up)."""
    quat = qpos[3:7]
    to_target = _to_target_xy(cfg, qpos)
    direction = to_target / (jnp.linalg.norm(to_target) + 1e-9)
    heading = _rotate(quat, jnp.asarray([1.0, 0.0, 0.0]))[:2] @ direction
    up = _rotate(quat, jnp.asarray([0.0, 0.0, 1.0]))[2]
    return heading, up


def _normalized_joint_pos(consts: RobotConsts, qpos: jax.Array) -> jax.Array:
    """Joint positions mapped to [-1, 1] over their limits (Isaac Lab's joint_pos_limit_normalized)."""
    lower, upper = jnp.asarray(consts.joint_lower), jnp.asarray(consts.joint_upper)
    return 2.0 * (qpos[7:] - (lower + upper) / 2) / (upper - lower)


def reset(cfg: LocomotionCfg, key: jax.Array, physics, consts: RobotConsts) -> tuple[jax.Array, jax.Array]:
    """Root at its default pose, at rest; joints at their defaults plus uniform offsets, inside their limits."""
    k_pos, k_vel = jax.random.split(key)
    n = cfg.num_actions
    qpos0 = jnp.asarray(consts.qpos0, jnp.float32)
    offsets = jax.random.uniform(k_pos, (n,), minval=cfg.reset_joint_pos_range[0], maxval=cfg.reset_joint_pos_range[1])
    joints = jnp.clip(qpos0[7:] + offsets, consts.joint_lower, consts.joint_upper)
    joint_vel = jax.random.uniform(k_vel, (n,), minval=cfg.reset_joint_vel_range[0], maxval=cfg.reset_joint_vel_range[1])
    return qpos0.at[7:].set(joints), jnp.concatenate([jnp.zeros(6), joint_vel])


def observe(cfg: LocomotionCfg, data, last_action: jax.Array, consts: RobotConsts) -> jax.Array:
    """Isaac Lab's classic policy observation, in its order: torso height, body linear and angular velocity,
    yaw and roll, angle to the target, up and heading projections, normalized joint positions, joint velocities,
    the feet's incoming wrenches, the last action."""
    q, v = data.qpos, data.qvel
    quat = q[3:7]
    yaw, roll = _yaw_roll(quat)
    to_target = _to_target_xy(cfg, q)
    angle_to_target = _wrap(jnp.arctan2(to_target[1], to_target[0]) - yaw)
    heading, up = _heading_and_up(cfg, q)
    feet = incoming_wrench(data, consts.feet).reshape(-1) if len(consts.feet) else jnp.zeros(0)
    return jnp.concatenate([
        q[2:3],
        rotate_inverse(quat, v[0:3]),
        v[3:6] * cfg.ang_vel_scale,
        jnp.stack([yaw, roll, angle_to_target, up, heading]),
        _normalized_joint_pos(consts, q),
        v[6:] * cfg.joint_vel_scale,
        feet * cfg.feet_force_scale,
        last_action,
    ])


def terminated(cfg: LocomotionCfg, data) -> jax.Array:
    return data.qpos[2] < cfg.termination_height


def reward_terms(cfg: LocomotionCfg, data, action: jax.Array, is_terminated: jax.Array, prev_qpos: jax.Array,
                 consts: RobotConsts, dt: float) -> dict[str, jax.Array]:
    """Isaac Lab's classic rewards, unweighted. `dt` is the policy step (the progress potential's unit)."""
    q = data.qpos
    heading, up = _heading_and_up(cfg, q)
    # progress_reward: the change of the potential -|to target|/dt; the previous step's root gives the old one
    progress = (jnp.linalg.norm(_to_target_xy(cfg, prev_qpos)) - jnp.linalg.norm(_to_target_xy(cfg, q))) / dt
    scaled = _normalized_joint_pos(consts, q)
    over = (jnp.abs(scaled) - cfg.joint_limit_threshold) / (1.0 - cfg.joint_limit_threshold)
    violation = jnp.where(jnp.abs(scaled) > cfg.joint_limit_threshold, over, 0.0)
    gear = jnp.asarray(consts.gear_scaled, jnp.float32)
    return {
        "progress": progress,
        "alive": 1.0 - is_terminated.astype(jnp.float32),
        "upright": (up > cfg.upright_threshold).astype(jnp.float32),
        "move_to_target": jnp.where(heading > cfg.heading_threshold, 1.0, heading / cfg.heading_threshold),
        "action_l2": jnp.sum(action**2),
        "energy": jnp.sum(jnp.abs(action * data.qvel[6:] * gear)),
        "joint_pos_limits": jnp.sum(gear * violation),
    }


def walked(cfg: LocomotionCfg, state) -> jax.Array:
    """The play metric: the torso still above the termination height (the robot has not fallen)."""
    return state.qpos[..., 2] >= cfg.termination_height


def make_locomotion_task(cfg: LocomotionCfg) -> Task:
    consts = RobotConsts.from_cfg(cfg)
    if len(consts.joint_lower) != cfg.num_actions:
        raise FleetlabError(f"{cfg.xml_path} has {len(consts.joint_lower)} motors, the config says {cfg.num_actions}")
    dt = cfg.sim_dt * cfg.decimation
    return Task(
        cfg=cfg,
        reset=functools.partial(reset, consts=consts),
        observe=functools.partial(observe, consts=consts),
        reward_terms=functools.partial(reward_terms, consts=consts, dt=dt),
        terminated=terminated,
        observe_needs_body_forces=len(consts.feet) > 0,
        success=walked,
        success_name="torso above the termination height",
    )
