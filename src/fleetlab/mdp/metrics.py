"""Metric terms: what `play` reports, per env and step (Isaac Lab logs the first two as its velocity command's
error_vel_xy and error_vel_yaw)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import Joints
from fleetlab.mdp.math import quat_rotate_inverse, take


def lin_vel_error(env, command_name: str) -> jax.Array:
    """|command xy - root xy velocity| (m/s, root frame)."""
    lin_vel = quat_rotate_inverse(env.data.qpos[3:7], env.data.qvel[0:3])
    return jnp.linalg.norm(env.command(command_name)[:2] - lin_vel[:2])


def yaw_rate_error(env, command_name: str) -> jax.Array:
    """|command yaw rate - root yaw rate| (rad/s)."""
    return jnp.abs(env.command(command_name)[2] - env.data.qvel[5])


def joint_pos_within(env, limit: float, joints=Joints()) -> jax.Array:
    """Every one of the joints within +-limit of zero (rad or m): cartpole's |pole| < 0.2 rad."""
    return jnp.all(jnp.abs(take(env.data.qpos, joints.qpos)) < limit)


def root_height_above(env, minimum_height: float) -> jax.Array:
    """The root at or above minimum_height (m): a robot that has not fallen."""
    return env.data.qpos[2] >= minimum_height


def terrain_level(env) -> jax.Array:
    """The env's terrain row (its "terrain_levels" curriculum value): how hard the ground it walks on is."""
    return env.curriculum["terrain_levels"]


__all__ = ["lin_vel_error", "yaw_rate_error", "joint_pos_within", "root_height_above", "terrain_level"]
