"""Cartpole task terms as pure JAX functions of one env. Joint 0 is the cart slider, joint 1 the pole hinge."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.core import Task
from fleetlab.tasks.cartpole.cfg import CartpoleCfg, CartpoleDirectCfg

CART, POLE = 0, 1


def reset(cfg: CartpoleCfg, key: jax.Array, physics) -> tuple[jax.Array, jax.Array]:
    k = jax.random.split(key, 4)
    u = lambda key, lo_hi: jax.random.uniform(key, (), minval=lo_hi[0], maxval=lo_hi[1])  # noqa: E731
    qpos = jnp.stack([u(k[0], cfg.cart_pos_range), u(k[1], cfg.pole_pos_range)])
    qvel = jnp.stack([u(k[2], cfg.cart_vel_range), u(k[3], cfg.pole_vel_range)])
    return qpos, qvel


def observe(cfg: CartpoleCfg, data, last_action=None) -> jax.Array:
    q, v = data.qpos, data.qvel
    if cfg.obs_order == "pole_cart":
        return jnp.stack([q[POLE], v[POLE], q[CART], v[CART]])
    return jnp.stack([q[CART], q[POLE], v[CART], v[POLE]])


def terminated(cfg: CartpoleCfg, data) -> jax.Array:
    out = jnp.abs(data.qpos[CART]) > cfg.max_cart_pos
    if cfg.terminate_on_pole_angle is not None:
        out = out | (jnp.abs(data.qpos[POLE]) > cfg.terminate_on_pole_angle)
    return out


def reward_terms(cfg: CartpoleCfg, data, action: jax.Array, is_terminated: jax.Array, prev_qpos=None) -> dict[str, jax.Array]:
    failed = is_terminated.astype(jnp.float32)
    return {
        "alive": 1.0 - failed,
        "terminating": failed,
        "pole_pos": data.qpos[POLE] ** 2,
        "cart_vel": jnp.abs(data.qvel[CART]),
        "pole_vel": jnp.abs(data.qvel[POLE]),
    }


def balanced(cfg: CartpoleCfg, state) -> jax.Array:
    """The play metric of the issue: the pole within 0.2 rad of upright."""
    return jnp.abs(state.qpos[..., POLE]) < 0.2


def make_task(direct: bool = False, **overrides) -> Task:
    cfg_cls = CartpoleDirectCfg if direct else CartpoleCfg
    return Task(cfg=cfg_cls(**overrides), reset=reset, observe=observe, reward_terms=reward_terms, terminated=terminated,
                success=balanced, success_name="|pole| < 0.2 rad")
