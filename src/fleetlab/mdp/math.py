"""Rotations of unit quaternions (w, x, y, z), MuJoCo's convention, for one env."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def quat_rotate_inverse(quat: jax.Array, v: jax.Array) -> jax.Array:
    """v (world frame) expressed in the frame of the unit quaternion quat."""
    w, xyz = quat[0], -quat[1:]
    t = 2.0 * jnp.cross(xyz, v)
    return v + w * t + jnp.cross(xyz, t)


def quat_rotate(quat: jax.Array, v: jax.Array) -> jax.Array:
    """v (in quat's frame) expressed in the world frame."""
    return quat_rotate_inverse(quat * jnp.asarray([1.0, -1.0, -1.0, -1.0]), v)


def quat_mul(a: jax.Array, b: jax.Array) -> jax.Array:
    """The rotation b, then a (Hamilton product a * b)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return jnp.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                      w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quat_from_euler_xyz(roll: jax.Array, pitch: jax.Array, yaw: jax.Array) -> jax.Array:
    """The rotation roll about x, then pitch about y, then yaw about z (all about the world axes)."""
    cr, sr, cp, sp, cy, sy = (jnp.cos(roll / 2), jnp.sin(roll / 2), jnp.cos(pitch / 2), jnp.sin(pitch / 2),
                              jnp.cos(yaw / 2), jnp.sin(yaw / 2))
    return jnp.stack([cy * cr * cp + sy * sr * sp, cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp,
                      sy * cr * cp - cy * sr * sp])


def yaw_roll(quat: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Yaw (about z) and roll (about x) of the rotation, rad in (-pi, pi]."""
    w, x, y, z = quat
    roll = jnp.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    yaw = jnp.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return yaw, roll


def uniform(key: jax.Array, shape: tuple, lo: float, hi: float) -> jax.Array:
    """U(lo, hi) of `shape`; for an empty range (lo == hi, numbers known when the env is built) the constant
    itself, with no random bits drawn: a range a config pins costs the step nothing."""
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo == hi:
        return jnp.full(shape, lo, jnp.float32)
    return jax.random.uniform(key, shape, minval=lo, maxval=hi)


def wrap_to_pi(angle: jax.Array) -> jax.Array:
    return jnp.arctan2(jnp.sin(angle), jnp.cos(angle))


def take(x: jax.Array, index) -> jax.Array:
    """x[index] for a numpy index array; a slice when the index is contiguous (no gather in the compiled step)."""
    if len(index) and (index == range(int(index[0]), int(index[0]) + len(index))).all():
        return x[int(index[0]):int(index[0]) + len(index)]
    return x[index]


def put(x: jax.Array, index, value: jax.Array) -> jax.Array:
    """x with x[index] = value, for a numpy index array (a slice update when contiguous)."""
    if len(index) and (index == range(int(index[0]), int(index[0]) + len(index))).all():
        return x.at[int(index[0]):int(index[0]) + len(index)].set(value)
    return x.at[index].set(value)
