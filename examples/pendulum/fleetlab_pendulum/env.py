"""The swing-up task's terms: pure JAX functions of ONE env (fleetlab vmaps and jits them). qpos[0] is the hinge
angle from upright; MJX's `data` holds qpos/qvel (and, with observe_needs_forward, the kinematics)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs import Task
from fleetlab_pendulum.cfg import PendulumSwingUpCfg


def reset(cfg: PendulumSwingUpCfg, key: jax.Array, physics) -> tuple[jax.Array, jax.Array]:
    k_angle, k_speed = jax.random.split(key)
    angle = cfg.hanging + cfg.start_angle_noise * jax.random.uniform(k_angle, (1,), minval=-1.0, maxval=1.0)
    speed = cfg.start_velocity_noise * jax.random.uniform(k_speed, (1,), minval=-1.0, maxval=1.0)
    return angle, speed


def observe(cfg: PendulumSwingUpCfg, data, last_action=None) -> jax.Array:
    return jnp.stack([jnp.cos(data.qpos[0]), jnp.sin(data.qpos[0]), data.qvel[0] / 8.0])


def terminated(cfg: PendulumSwingUpCfg, data) -> jax.Array:
    return jnp.abs(data.qvel[0]) > cfg.max_speed


def reward_terms(cfg: PendulumSwingUpCfg, data, action, is_terminated, prev_qpos=None) -> dict[str, jax.Array]:
    return {
        "upright": jnp.cos(data.qpos[0]),  # +1 upright, -1 hanging
        "spin": data.qvel[0] ** 2,
        "effort": jnp.sum(action**2),
    }


def upright(cfg: PendulumSwingUpCfg, state) -> jax.Array:
    """Play's success test on the batched State: the bob within `upright_tolerance` of the top."""
    angle = jnp.arctan2(jnp.sin(state.qpos[..., 0]), jnp.cos(state.qpos[..., 0]))
    return jnp.abs(angle) < cfg.upright_tolerance


def make_task(**overrides) -> Task:
    return Task(cfg=PendulumSwingUpCfg(**overrides), reset=reset, observe=observe, reward_terms=reward_terms,
                terminated=terminated, success=upright, success_name="|angle| < 0.2 rad")
