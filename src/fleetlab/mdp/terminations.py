"""Termination terms (Isaac Lab's isaaclab.envs.mdp.terminations), each a pure function of one env returning a
bool scalar."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import Joints
from fleetlab.mdp.math import take


def time_out(env) -> jax.Array:
    """The episode reached its length (use with DoneTerm(time_out=True))."""
    return env.episode_length >= env.max_episode_length


def root_height_below_minimum(env, minimum_height: float) -> jax.Array:
    """The root is below minimum_height (m, world z)."""
    return env.data.qpos[2] < minimum_height


def joint_pos_out_of_manual_limit(env, bounds: tuple, joints=Joints()) -> jax.Array:
    """Any of the joints is outside bounds = (lower, upper) (rad or m)."""
    q = take(env.data.qpos, joints.qpos)
    return jnp.any((q < bounds[0]) | (q > bounds[1]))


def illegal_contact(env, threshold: float, sensor_cfg) -> jax.Array:
    """Any of the contact sensor's selected bodies feels a contact force above threshold (N): a fall."""
    force = env.sensors[sensor_cfg.sensor]["force"][sensor_cfg.ids]
    return jnp.any(jnp.linalg.norm(force, axis=-1) > threshold)


__all__ = ["time_out", "root_height_below_minimum", "joint_pos_out_of_manual_limit", "illegal_contact"]
