"""Observation terms (Isaac Lab's isaaclab.envs.mdp.observations and its classic-locomotion terms), each a pure
function of one env returning a 1-D float array. Root terms need a free root joint (qpos[0:7], qvel[0:6])."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.envs.cfg import Bodies, Joints
from fleetlab.errors import FleetlabError
from fleetlab.mdp.math import quat_rotate, quat_rotate_inverse, take, wrap_to_pi, yaw_roll
from fleetlab.sim.mjx import incoming_wrench

GRAVITY_DIR = np.asarray([0.0, 0.0, -1.0], np.float32)  # numpy: a JAX array at import would start XLA too early


def base_pos_z(env) -> jax.Array:
    """The root's height above the world origin (m), shape (1,)."""
    return env.data.qpos[2:3]


def base_lin_vel(env) -> jax.Array:
    """The root's linear velocity in its own frame (m/s)."""
    return quat_rotate_inverse(env.data.qpos[3:7], env.data.qvel[0:3])


def base_ang_vel(env) -> jax.Array:
    """The root's angular velocity in its own frame (rad/s; MuJoCo's free-joint qvel[3:6])."""
    return env.data.qvel[3:6]


def projected_gravity(env) -> jax.Array:
    """The unit gravity direction in the root's frame: (0, 0, -1) when upright."""
    return quat_rotate_inverse(env.data.qpos[3:7], GRAVITY_DIR)


def base_yaw_roll(env) -> jax.Array:
    """The root's yaw and roll (rad), shape (2,)."""
    yaw, roll = yaw_roll(env.data.qpos[3:7])
    return jnp.stack([yaw, roll])


def _to_target_xy(qpos: jax.Array, target_pos) -> jax.Array:
    return jnp.asarray(target_pos[:2]) - qpos[:2]


def base_angle_to_target(env, target_pos=(1000.0, 0.0, 0.0)) -> jax.Array:
    """The angle (rad) from the root's yaw to the direction of target_pos (world, m) in the ground plane, (1,)."""
    to_target = _to_target_xy(env.data.qpos, target_pos)
    yaw, _ = yaw_roll(env.data.qpos[3:7])
    return jnp.stack([wrap_to_pi(jnp.arctan2(to_target[1], to_target[0]) - yaw)])


def up_proj(qpos: jax.Array) -> jax.Array:
    return quat_rotate(qpos[3:7], jnp.asarray([0.0, 0.0, 1.0]))[2]


def heading_proj(qpos: jax.Array, target_pos) -> jax.Array:
    to_target = _to_target_xy(qpos, target_pos)
    direction = to_target / (jnp.linalg.norm(to_target) + 1e-9)
    return quat_rotate(qpos[3:7], jnp.asarray([1.0, 0.0, 0.0]))[:2] @ direction


def base_up_proj(env) -> jax.Array:
    """The root's up axis dotted with the world's up axis (1 upright), shape (1,)."""
    return jnp.stack([up_proj(env.data.qpos)])


def base_heading_proj(env, target_pos=(1000.0, 0.0, 0.0)) -> jax.Array:
    """The root's forward (x) axis dotted with the unit direction to target_pos, in the ground plane, (1,)."""
    return jnp.stack([heading_proj(env.data.qpos, target_pos)])


def base_orientation_to_target(env, target_pos=(1000.0, 0.0, 0.0)) -> jax.Array:
    """base_yaw_roll, base_angle_to_target, base_up_proj and base_heading_proj in one term, shape (5,): the
    classic locomotion tasks' observation of them, with the yaw computed once. (As four terms, XLA fuses the
    Ant's step differently and its roll differs from this term's by one float32 ulp.)"""
    qpos = env.data.qpos
    yaw, roll = yaw_roll(qpos[3:7])
    to_target = _to_target_xy(qpos, target_pos)
    angle = wrap_to_pi(jnp.arctan2(to_target[1], to_target[0]) - yaw)
    return jnp.stack([yaw, roll, angle, up_proj(qpos), heading_proj(qpos, target_pos)])


def joint_pos_rel(env, joints=Joints()) -> jax.Array:
    """Joint positions minus their defaults (rad or m), in the order of `joints`."""
    default = jnp.asarray(env.scene.default_qpos[joints.qpos], jnp.float32)
    return take(env.data.qpos, joints.qpos) - default


def joint_vel_rel(env, joints=Joints()) -> jax.Array:
    """Joint velocities (rad/s or m/s) minus their defaults, which are zero."""
    return take(env.data.qvel, joints.dof)


def joint_pos_limits(env, joints) -> tuple[jax.Array, jax.Array]:
    m = env.scene.mj_model
    return jnp.asarray(m.jnt_range[joints.ids, 0].copy()), jnp.asarray(m.jnt_range[joints.ids, 1].copy())


def joint_pos_limit_normalized(env, joints=Joints()) -> jax.Array:
    """Joint positions mapped to [-1, 1] over their MJCF ranges (unitless)."""
    lower, upper = joint_pos_limits(env, joints)
    return 2.0 * (take(env.data.qpos, joints.qpos) - (lower + upper) / 2) / (upper - lower)


def body_incoming_wrench(env, bodies=Bodies()) -> jax.Array:
    """Each body's 6-D wrench from its parent (torque N m, then force N), world orientation, flattened: MuJoCo's
    cfrc_int after the step's last physics step (zeros at a reset)."""
    return incoming_wrench(env.data, bodies.ids).reshape(-1)


def last_action(env) -> jax.Array:
    """The policy's action of this step, before scaling (zeros at a reset)."""
    return env.action


def generated_commands(env, command_name: str) -> jax.Array:
    """The command vector of `command_name` (a velocity command: vx, vy in m/s, yaw rate in rad/s, root frame)."""
    return env.command(command_name)


def _grid_pattern(resolution: float, size: tuple) -> np.ndarray:
    """Isaac Lab's GridPatternCfg (ordering "xy", x fastest): (n, 2) points, for 0.1 m over 1.6 x 1.0 m 17 x 11."""
    x = np.arange(-size[0] / 2, size[0] / 2 + 1e-9, resolution)
    y = np.arange(-size[1] / 2, size[1] / 2 + 1e-9, resolution)
    grid_x, grid_y = np.meshgrid(x, y, indexing="xy")
    return np.stack([grid_x.ravel(), grid_y.ravel()], axis=1).astype(np.float32)


def height_scan(env, offset: float = 0.5, resolution: float = 0.1, size: tuple = (1.6, 1.0)) -> jax.Array:
    """Isaac Lab's height_scan from a RayCaster on the root body with ray alignment "yaw" and a grid pattern:
    root z − terrain z − offset at each grid point, the grid turned by the root's yaw only. The terrain z comes
    from the scene's height field (fleetlab.terrains.HeightField: the exact surface of MuJoCo's hfield, no ray
    cast). Needs a scene with a terrain (SceneCfg.terrain)."""
    field = env.scene.height_field
    if field is None:
        raise FleetlabError(f"task '{env.scene.task_id}': height_scan reads the terrain, but the scene has none "
                            "(set scene.terrain to a TerrainImporterCfg)")
    points = jnp.asarray(_grid_pattern(resolution, size))
    yaw, _ = yaw_roll(env.data.qpos[3:7])
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    turned = jnp.stack([c * points[:, 0] - s * points[:, 1], s * points[:, 0] + c * points[:, 1]], 1)
    world = env.data.qpos[0:2] + turned
    return env.data.qpos[2] - field(world) - offset


__all__ = ["base_pos_z", "base_lin_vel", "base_ang_vel", "projected_gravity", "base_yaw_roll", "base_angle_to_target",
           "base_up_proj", "base_heading_proj", "base_orientation_to_target", "joint_pos_rel", "joint_vel_rel",
           "joint_pos_limit_normalized", "body_incoming_wrench", "last_action", "generated_commands",
           "height_scan"]
