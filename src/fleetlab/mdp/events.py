"""Event terms (Isaac Lab's isaaclab.envs.mdp.events): pure functions of one env and its key (env.key) returning
the replacements, {"qpos": ...}, {"qvel": ...} or a model field's entries ({"body_mass": ModelEntries(...)}).
Defaults are the scene's (the MJCF's model, the default joint positions), so events do not compound."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.envs.cfg import Bodies, Joints, ModelEntries
from fleetlab.mdp.math import put, quat_from_euler_xyz, quat_mul, take, uniform

_AXES = ("x", "y", "z", "roll", "pitch", "yaw")


def _draw_axes(key: jax.Array, ranges: dict) -> list:
    """One value per axis of _AXES, U(ranges[axis]); an axis absent or with an empty range is a constant, so that
    XLA folds what follows from it (a yaw-only reset computes no sine or cosine of roll and pitch)."""
    drawn = [a for a in _AXES if ranges.get(a, (0.0, 0.0))[0] != ranges.get(a, (0.0, 0.0))[1]]
    u = dict(zip(drawn, jax.random.uniform(key, (len(drawn),)))) if drawn else {}
    out = []
    for axis in _AXES:
        lo, hi = ranges.get(axis, (0.0, 0.0))
        out.append(lo + (hi - lo) * u[axis] if axis in u else float(lo))
    return out


def _clamp_range(env, joints) -> tuple[np.ndarray, np.ndarray]:
    """The joints' MJCF ranges (numpy float64), -inf..inf for a joint without limits."""
    m = env.scene.mj_model
    limited = m.jnt_limited[joints.ids].astype(bool)
    return (np.where(limited, m.jnt_range[joints.ids, 0], -np.inf),
            np.where(limited, m.jnt_range[joints.ids, 1], np.inf))


def reset_joints_by_offset(env, position_range: tuple, velocity_range: tuple, joints=Joints()) -> dict:
    """Joints at their defaults plus U(position_range), clamped to their MJCF ranges (if limited), with velocities
    U(velocity_range) (rad, rad/s)."""
    k_pos, k_vel = jax.random.split(env.key)
    qpos, qvel = env.data.qpos, env.data.qvel
    n = len(joints)
    offsets = uniform(k_pos, (n,), position_range[0], position_range[1])
    lower, upper = _clamp_range(env, joints)
    positions = jnp.clip(take(qpos, joints.qpos) + offsets, lower, upper)
    velocities = uniform(k_vel, (n,), velocity_range[0], velocity_range[1])
    return {"qpos": put(qpos, joints.qpos, positions),
            "qvel": put(qvel, joints.dof, take(qvel, joints.dof) + velocities)}


def reset_joints_by_offset_per_joint(env, position_range: tuple, velocity_range: tuple, joints=Joints()) -> dict:
    """reset_joints_by_offset with one range per joint (Isaac Lab's cartpole writes one event per joint): joint i
    at its default + U(position_range[i]), velocity U(velocity_range[i]); each draw has its own key (positions,
    then velocities, in joint order), so a joint's draws do not depend on the others' ranges. Not clamped."""
    n = len(joints)
    if len(position_range) != n or len(velocity_range) != n:
        raise ValueError(f"reset_joints_by_offset_per_joint: {n} joints, {len(position_range)} position and "
                         f"{len(velocity_range)} velocity ranges")
    keys = jax.random.split(env.key, 2 * n)
    u = lambda key, lo_hi: uniform(key, (), lo_hi[0], lo_hi[1])  # noqa: E731
    qpos, qvel = env.data.qpos, env.data.qvel
    positions = take(qpos, joints.qpos) + jnp.stack([u(keys[i], position_range[i]) for i in range(n)])
    velocities = take(qvel, joints.dof) + jnp.stack([u(keys[n + i], velocity_range[i]) for i in range(n)])
    return {"qpos": put(qpos, joints.qpos, positions), "qvel": put(qvel, joints.dof, velocities)}


def reset_joints_by_scale(env, position_range: tuple, velocity_range: tuple, joints=Joints()) -> dict:
    """Joints at their defaults times U(position_range), clamped to their ranges; velocities (default zero) times
    U(velocity_range)."""
    k_pos, k_vel = jax.random.split(env.key)
    qpos, qvel = env.data.qpos, env.data.qvel
    n = len(joints)
    default = jnp.asarray(env.scene.default_qpos[joints.qpos], jnp.float32)
    scale = uniform(k_pos, (n,), position_range[0], position_range[1])
    lower, upper = _clamp_range(env, joints)
    positions = jnp.clip(default * scale, lower, upper)
    velocities = take(qvel, joints.dof) * uniform(k_vel, (n,), velocity_range[0], velocity_range[1])
    return {"qpos": put(qpos, joints.qpos, positions), "qvel": put(qvel, joints.dof, velocities)}


def reset_root_state_uniform(env, pose_range: dict, velocity_range: dict) -> dict:
    """The free root at its default pose plus the env's origin (its terrain tile's; zeros without a terrain),
    offset by U(pose_range) ({"x": (lo, hi), ..., "yaw": ...}: m and rad, world frame; the rotation applied after
    the default orientation) and moving at U(velocity_range) (m/s and rad/s: x, y, z world linear velocity; roll,
    pitch, yaw the angular velocity in the root frame)."""
    k_pose, k_vel = jax.random.split(env.key)
    pose = _draw_axes(k_pose, pose_range)
    default = jnp.asarray(env.scene.default_qpos[:7], jnp.float32)
    quat = quat_mul(quat_from_euler_xyz(*[jnp.float32(p) for p in pose[3:]]), default[3:7])
    position = default[0:3] + env.env_origin + jnp.stack([jnp.float32(p) for p in pose[:3]])
    qpos = env.data.qpos.at[0:3].set(position).at[3:7].set(quat)
    velocity = jnp.stack([jnp.float32(v) for v in _draw_axes(k_vel, velocity_range)])
    return {"qpos": qpos, "qvel": env.data.qvel.at[0:6].set(velocity)}


def push_by_setting_velocity(env, velocity_range: dict) -> dict:
    """The root's velocity plus U(velocity_range) (as in reset_root_state_uniform): a shove."""
    push = jnp.stack([jnp.float32(v) for v in _draw_axes(env.key, velocity_range)])
    return {"qvel": env.data.qvel.at[0:6].add(push)}


def randomize_rigid_body_mass(env, mass_distribution_params: tuple, bodies=Bodies(), operation: str = "add",
                              recompute_inertia: bool = True) -> dict:
    """Each body's mass drawn from its MJCF value: + U(params) kg ("add") or x U(params) ("scale"); its inertia
    scaled by the same ratio (recompute_inertia: a body of the same shape and density)."""
    m = env.scene.mj_model
    default = jnp.asarray(m.body_mass, jnp.float32)
    draw = uniform(env.key, (len(bodies),), mass_distribution_params[0], mass_distribution_params[1])
    base = default[bodies.ids]
    if operation == "add":
        mass = base + draw
    elif operation == "scale":
        mass = base * draw
    else:
        raise ValueError(f"randomize_rigid_body_mass: operation '{operation}' is not 'add' or 'scale'")
    out = {"body_mass": ModelEntries((bodies.ids,), mass)}
    if recompute_inertia:
        inertia = jnp.asarray(m.body_inertia[bodies.ids], jnp.float32)
        out["body_inertia"] = ModelEntries((bodies.ids,), inertia * (mass / base)[:, None])
    return out


def randomize_rigid_body_material(env, static_friction_range: tuple, bodies=Bodies()) -> dict:
    """The sliding friction of the bodies' colliding geoms, U(static_friction_range) for each geom. MuJoCo has one
    sliding coefficient, and takes the larger of two geoms in contact."""
    m = env.scene.mj_model
    body_set = set(bodies.ids.tolist())
    geoms = np.asarray([g for g in range(m.ngeom) if m.geom_bodyid[g] in body_set
                        and (m.geom_contype[g] or m.geom_conaffinity[g])], np.int32)
    friction = uniform(env.key, (len(geoms),), static_friction_range[0], static_friction_range[1])
    return {"geom_friction": ModelEntries((geoms, 0), friction)}


__all__ = ["reset_joints_by_offset", "reset_joints_by_offset_per_joint", "reset_joints_by_scale",
           "reset_root_state_uniform", "push_by_setting_velocity", "randomize_rigid_body_mass",
           "randomize_rigid_body_material"]
