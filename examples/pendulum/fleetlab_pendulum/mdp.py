"""This task's own terms, written as fleetlab's term library writes its own: pure JAX functions of ONE env,
`func(env, **params)` (fleetlab vmaps and jits them). env.data is MuJoCo's (MJX) Data after the step."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def angle_cos_sin(env) -> jax.Array:
    """cos and sin of the hinge angle (unitless): continuous across the +-pi wrap."""
    return jnp.stack([jnp.cos(env.data.qpos[0]), jnp.sin(env.data.qpos[0])])


def upright(env) -> jax.Array:
    """cos(angle): +1 upright, -1 hanging."""
    return jnp.cos(env.data.qpos[0])


def spinning_faster_than(env, max_speed: float) -> jax.Array:
    """|angular velocity| > max_speed (rad/s)."""
    return jnp.abs(env.data.qvel[0]) > max_speed


def within_upright(env, tolerance: float) -> jax.Array:
    """The bob within `tolerance` (rad) of the top."""
    angle = jnp.arctan2(jnp.sin(env.data.qpos[0]), jnp.cos(env.data.qpos[0]))
    return jnp.abs(angle) < tolerance
