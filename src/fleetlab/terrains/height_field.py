"""The terrain's height under any (x, y), read from the height array on the triangles MuJoCo collides with: each
cell split along its (ix, iy)–(ix+1, iy+1) diagonal (the prisms of MuJoCo's hfield collider and mj_ray). Exact for
a height field, and far cheaper than casting rays: a gather of 3 heights per point. Outside the grid: the edge."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


class HeightField:
    def __init__(self, heights: np.ndarray, corner_xy: tuple, spacing: float):
        self.heights = jnp.asarray(heights, jnp.float32)  # [ix, iy] m
        self.corner = jnp.asarray(corner_xy, jnp.float32)
        self.spacing = float(spacing)
        self.shape = heights.shape

    def __call__(self, xy: jnp.ndarray) -> jnp.ndarray:
        """Heights (m) under the points xy (..., 2)."""
        u = (xy - self.corner) / self.spacing
        limit = jnp.asarray(self.shape, jnp.float32) - 1.0 - 1e-4
        u = jnp.clip(u, 0.0, limit)
        cell = jnp.floor(u).astype(jnp.int32)
        fx, fy = (u - cell)[..., 0], (u - cell)[..., 1]
        i, j = cell[..., 0], cell[..., 1]
        h = self.heights
        h00, h11 = h[i, j], h[i + 1, j + 1]
        lower = fx >= fy  # the triangle (ix, iy), (ix+1, iy), (ix+1, iy+1)
        h10, h01 = h[i + 1, j], h[i, j + 1]
        return jnp.where(lower, h00 + fx * (h10 - h00) + fy * (h11 - h10),
                         h00 + fy * (h01 - h00) + fx * (h11 - h01))


__all__ = ["HeightField"]
