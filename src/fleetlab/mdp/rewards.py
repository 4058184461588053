"""Reward terms (Isaac Lab's isaaclab.envs.mdp.rewards, its locomotion/velocity and classic-locomotion terms),
each a pure function of one env returning an unweighted float scalar; the reward manager multiplies by the weight
(and the policy dt)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.envs.cfg import Joints
from fleetlab.mdp.math import quat_rotate_inverse, take
from fleetlab.mdp.observations import (
    _to_target_xy,
    heading_proj,
    joint_pos_limit_normalized,
    projected_gravity,
    up_proj,
)


def is_alive(env) -> jax.Array:
    """1 while no failure term fired at this step."""
    return 1.0 - env.terminated.astype(jnp.float32)


def is_terminated(env) -> jax.Array:
    """1 at the step a failure term fired (time-outs excluded)."""
    return env.terminated.astype(jnp.float32)


def progress_reward(env, target_pos=(1000.0, 0.0, 0.0)) -> jax.Array:
    """The root's progress towards target_pos in the ground plane over the step (m/s): the change of Isaac Lab's
    potential -|to target| / dt, from the root position before and after the step."""
    before = jnp.linalg.norm(_to_target_xy(env.prev_qpos, target_pos))
    return (before - jnp.linalg.norm(_to_target_xy(env.data.qpos, target_pos))) / env.scene.dt


def upright_posture_bonus(env, threshold: float) -> jax.Array:
    """1 where the root's up axis dotted with the world's exceeds threshold."""
    return (up_proj(env.data.qpos) > threshold).astype(jnp.float32)


def move_to_target_bonus(env, threshold: float, target_pos=(1000.0, 0.0, 0.0)) -> jax.Array:
    """1 when the root heads to target_pos (heading projection > threshold), else heading / threshold."""
    heading = heading_proj(env.data.qpos, target_pos)
    return jnp.where(heading > threshold, 1.0, heading / threshold)


def action_l2(env) -> jax.Array:
    """Sum of squared policy actions."""
    return jnp.sum(env.action**2)


def action_rate_l2(env) -> jax.Array:
    """Sum of squared changes of the policy action since the step before."""
    return jnp.sum((env.action - env.prev_action) ** 2)


def _gear_ratio_scaled(env) -> np.ndarray:
    gear = env.scene.mj_model.actuator_gear[:, 0]
    return gear / gear.max()


def power_consumption(env, joints=Joints()) -> jax.Array:
    """Sum over the actuated joints of |action x joint velocity x gear / max gear| (Isaac Lab's classic energy
    term; the actuators in joint order)."""
    gear = jnp.asarray(_gear_ratio_scaled(env), jnp.float32)
    return jnp.sum(jnp.abs(env.action * take(env.data.qvel, joints.dof) * gear))


def joint_pos_limits_penalty_ratio(env, threshold: float, joints=Joints()) -> jax.Array:
    """Sum over joints of gear ratio x how far past `threshold` of its range (normalized to [-1, 1]) each joint
    is, as a fraction of the rest of the range."""
    scaled = joint_pos_limit_normalized(env, joints)
    over = (jnp.abs(scaled) - threshold) / (1.0 - threshold)
    violation = jnp.where(jnp.abs(scaled) > threshold, over, 0.0)
    return jnp.sum(jnp.asarray(_gear_ratio_scaled(env), jnp.float32) * violation)


def joint_pos_target_l2(env, target: float, joints=Joints()) -> jax.Array:
    """Sum of squared distances of the joints from `target` (rad or m)."""
    return jnp.sum(jnp.square(take(env.data.qpos, joints.qpos) - target))


def joint_vel_l1(env, joints=Joints()) -> jax.Array:
    """Sum of absolute joint velocities."""
    return jnp.sum(jnp.abs(take(env.data.qvel, joints.dof)))


def joint_vel_l2(env, joints=Joints()) -> jax.Array:
    """Sum of squared joint velocities."""
    return jnp.sum(take(env.data.qvel, joints.dof) ** 2)


def joint_torques_l2(env) -> jax.Array:
    """Sum of squared actuator forces (N m) at the step's last physics step."""
    return jnp.sum(env.data.actuator_force**2)


def joint_acc_l2(env, joints=Joints()) -> jax.Array:
    """Sum of squared joint accelerations (rad/s^2), the change of joint velocity over the policy step."""
    acc = (take(env.data.qvel, joints.dof) - take(env.prev_qvel, joints.dof)) / env.scene.dt
    return jnp.sum(acc**2)


def _lin_vel_b(env) -> jax.Array:
    return quat_rotate_inverse(env.data.qpos[3:7], env.data.qvel[0:3])


def track_lin_vel_xy_exp(env, std: float, command_name: str) -> jax.Array:
    """exp(-|command xy - root xy velocity|^2 / std^2), velocities in the root frame (m/s)."""
    command = env.command(command_name)
    return jnp.exp(-jnp.sum((command[:2] - _lin_vel_b(env)[:2]) ** 2) / std**2)


def track_ang_vel_z_exp(env, std: float, command_name: str) -> jax.Array:
    """exp(-(command yaw rate - root yaw rate)^2 / std^2), rad/s in the root frame."""
    return jnp.exp(-((env.command(command_name)[2] - env.data.qvel[5]) ** 2) / std**2)


def lin_vel_z_l2(env) -> jax.Array:
    """The root's vertical velocity squared, root frame (m/s)^2."""
    return _lin_vel_b(env)[2] ** 2


def ang_vel_xy_l2(env) -> jax.Array:
    """The root's roll and pitch rates squared, summed, root frame (rad/s)^2."""
    return jnp.sum(env.data.qvel[3:5] ** 2)


def flat_orientation_l2(env) -> jax.Array:
    """The x and y components of gravity in the root frame, squared and summed (0 when level)."""
    return jnp.sum(projected_gravity(env)[:2] ** 2)


def feet_air_time(env, command_name: str, sensor_cfg, threshold: float) -> jax.Array:
    """Sum over the sensor's selected bodies of (time in the air - threshold, s) at each one's first contact; zero
    when the commanded planar speed is below 0.1 m/s (Isaac Lab's feet_air_time)."""
    reading = env.sensors[sensor_cfg.sensor]
    first = take(reading["first_contact"], sensor_cfg.ids).astype(jnp.float32)
    air = jnp.sum((take(reading["last_air_time"], sensor_cfg.ids) - threshold) * first)
    return jnp.where(jnp.linalg.norm(env.command(command_name)[:2]) > 0.1, air, 0.0)


__all__ = ["is_alive", "is_terminated", "progress_reward", "upright_posture_bonus", "move_to_target_bonus",
           "action_l2", "action_rate_l2", "power_consumption", "joint_pos_limits_penalty_ratio",
           "joint_pos_target_l2", "joint_vel_l1", "joint_vel_l2", "joint_torques_l2", "joint_acc_l2",
           "track_lin_vel_xy_exp", "track_ang_vel_z_exp", "lin_vel_z_l2", "ang_vel_xy_l2", "flat_orientation_l2",
           "feet_air_time"]
