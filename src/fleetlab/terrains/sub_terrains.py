"""One tile of each sub-terrain type as heights (m) on the tile's vertex grid, (n, n) with n = size/scale + 1 and
index [ix, iy] at (ix·scale, iy·scale), and the tile's origin (where envs spawn), in the tile's frame. Sizes are
counted in whole vertices, so ring and cell edges fall on vertices exactly. The shapes and numbers are Isaac Lab's
(isaaclab/terrains/trimesh/mesh_terrains.py, height_field/hf_terrains.py; ../shared/reference/go1-rough.md §3)."""

from __future__ import annotations

import numpy as np

from fleetlab.terrains.cfg import (
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    MeshPyramidStairsTerrainCfg,
    MeshRandomGridTerrainCfg,
    TerrainGeneratorCfg,
)


def _lerp(value_range: tuple, difficulty: float) -> float:
    low, high = value_range
    return low + difficulty * (high - low)


def _cells(length: float, scale: float) -> int:
    return int(round(length / scale))


def _edge_distance(n: int) -> np.ndarray:
    """Each vertex's distance (in vertices) to the nearest tile edge: the rings of a pyramid."""
    i = np.arange(n)
    d = np.minimum(i, n - 1 - i)
    return np.minimum(d[:, None], d[None, :])


def pyramid_stairs(cfg: MeshPyramidStairsTerrainCfg, difficulty: float, rng, gen: TerrainGeneratorCfg):
    hs, n = gen.horizontal_scale, _cells(gen.size[0], gen.horizontal_scale) + 1
    step = _lerp(cfg.step_height_range, difficulty)
    border, tread = _cells(cfg.border_width, hs), _cells(cfg.step_width, hs)
    # as many rings as fit between border and platform (Isaac Lab: (size - 2 border - platform) // (2 tread) + 1)
    rings = int((gen.size[0] - 2 * cfg.border_width - cfg.platform_width) // (2 * cfg.step_width)) + 1
    ring = (_edge_distance(n) - border) // tread  # -1.. : which ring a vertex lies on (>= rings: the platform)
    level = np.where(ring < 0, 0, np.minimum(ring + 1, rings + 1))
    heights = level * step * (-1.0 if cfg.inverted else 1.0)
    top = (rings + 1) * step * (-1.0 if cfg.inverted else 1.0)
    return heights, np.array([gen.size[0] / 2, gen.size[1] / 2, top])


def random_grid(cfg: MeshRandomGridTerrainCfg, difficulty: float, rng, gen: TerrainGeneratorCfg):
    hs, n = gen.horizontal_scale, _cells(gen.size[0], gen.horizontal_scale) + 1
    h = _lerp(cfg.grid_height_range, difficulty)
    num_cells = int(gen.size[0] / cfg.grid_width)
    border = (gen.size[0] - num_cells * cfg.grid_width) / 2  # the ring left over, at z = 0
    cell_heights = rng.uniform(-h, h, (num_cells, num_cells))
    x = np.arange(n) * hs
    cell = np.floor((x - border) / cfg.grid_width + 1e-9).astype(int)
    inside = (cell >= 0) & (cell < num_cells)
    cell = np.clip(cell, 0, num_cells - 1)
    heights = np.where(inside[:, None] & inside[None, :], cell_heights[cell[:, None], cell[None, :]], 0.0)
    half = cfg.platform_width / 2 + 1e-9
    centre = np.abs(x - gen.size[0] / 2) <= half
    heights[np.ix_(centre, centre)] = h
    return heights, np.array([gen.size[0] / 2, gen.size[1] / 2, h])


def _hf_origin(heights: np.ndarray, gen: TerrainGeneratorCfg) -> np.ndarray:
    """Isaac Lab's height-field origin: the tile centre at the highest vertex of its central 2 x 2 m."""
    c, r = heights.shape[0] // 2, _cells(1.0, gen.horizontal_scale)
    top = heights[c - r:c + r + 1, c - r:c + r + 1].max()
    return np.array([gen.size[0] / 2, gen.size[1] / 2, top])


def _quantised(units: np.ndarray, gen: TerrainGeneratorCfg) -> np.ndarray:
    """Isaac Lab's height fields are integers of vertical_scale."""
    return np.round(units) * gen.vertical_scale


def random_uniform(cfg: HfRandomUniformTerrainCfg, difficulty: float, rng, gen: TerrainGeneratorCfg):
    n, rim = _cells(gen.size[0], gen.horizontal_scale) + 1, int(cfg.border_width / gen.horizontal_scale) + 1
    low, high, step = (np.round(v / gen.vertical_scale) for v in (*cfg.noise_range, cfg.noise_step))
    choices = np.arange(low, high + step / 2, step)
    units = np.zeros((n, n))
    units[rim:n - rim, rim:n - rim] = rng.choice(choices, (n - 2 * rim, n - 2 * rim))
    heights = _quantised(units, gen)
    return heights, _hf_origin(heights, gen)


def pyramid_slope(cfg: HfPyramidSlopedTerrainCfg, difficulty: float, rng, gen: TerrainGeneratorCfg):
    hs, n = gen.horizontal_scale, _cells(gen.size[0], gen.horizontal_scale) + 1
    rim = int(cfg.border_width / hs) + 1
    inner = n - 2 * rim  # 75 for the Go1's tiles
    half = inner // 2
    slope = _lerp(cfg.slope_range, difficulty)
    top = slope * inner / 2 * hs / gen.vertical_scale  # units: the rise over half the content (3.75 m)
    tent = 1.0 - np.abs(np.arange(inner) - half) / half
    units = top * tent[:, None] * tent[None, :]
    platform = int(cfg.platform_width / 2 / hs)
    units = np.minimum(units, top * ((half - platform) / half) ** 2)
    full = np.zeros((n, n))
    full[rim:rim + inner, rim:rim + inner] = -units if cfg.inverted else units
    heights = _quantised(full, gen)
    return heights, _hf_origin(heights, gen)


BUILDERS = {MeshPyramidStairsTerrainCfg: pyramid_stairs, MeshRandomGridTerrainCfg: random_grid,
            HfRandomUniformTerrainCfg: random_uniform, HfPyramidSlopedTerrainCfg: pyramid_slope}

__all__ = ["BUILDERS", "pyramid_stairs", "random_grid", "random_uniform", "pyramid_slope"]
