"""The terrain configs: Isaac Lab's TerrainGeneratorCfg and its sub-terrain cfgs, with Isaac Lab's names and units
(m; a difficulty d in [0, 1] maps each range linearly: low + d·(high − low)). Facts: ../shared/reference/go1-rough.md
§2–3. Every tile is rasterised into ONE MuJoCo height field (terrains/mjcf.py), so stairs and boxes keep their
heights and each vertical edge becomes a ramp one horizontal_scale wide."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class SubTerrainCfg:
    proportion: float = 1.0  # share of the columns (curriculum) or of the tiles (random)


@dataclasses.dataclass(frozen=True)
class MeshPyramidStairsTerrainCfg(SubTerrainCfg):
    """Rings of treads up to a central platform (down into a pit when `inverted`)."""

    step_height_range: tuple = (0.05, 0.23)
    step_width: float = 0.3
    platform_width: float = 3.0
    border_width: float = 1.0
    inverted: bool = False


@dataclasses.dataclass(frozen=True)
class MeshRandomGridTerrainCfg(SubTerrainCfg):
    """A grid of cells, each topped at U(−h, +h), around a central platform at +h."""

    grid_width: float = 0.45
    grid_height_range: tuple = (0.05, 0.2)
    platform_width: float = 2.0


@dataclasses.dataclass(frozen=True)
class HfRandomUniformTerrainCfg(SubTerrainCfg):
    """Every vertex drawn from {low, low + step, ..., high}; difficulty plays no part (as in Isaac Lab)."""

    noise_range: tuple = (0.02, 0.10)
    noise_step: float = 0.02
    border_width: float = 0.25


@dataclasses.dataclass(frozen=True)
class HfPyramidSlopedTerrainCfg(SubTerrainCfg):
    """A four-sided pyramid of rise/run `slope` (a pit when `inverted`), flattened at the central platform."""

    slope_range: tuple = (0.0, 0.4)
    platform_width: float = 2.0
    border_width: float = 0.25
    inverted: bool = False


@dataclasses.dataclass(frozen=True)
class TerrainGeneratorCfg:
    size: tuple = (8.0, 8.0)  # one tile, m
    border_width: float = 20.0  # flat ring around the grid, top at z = 0
    num_rows: int = 10  # difficulty levels (x)
    num_cols: int = 20  # sub-terrain types (y)
    horizontal_scale: float = 0.1
    vertical_scale: float = 0.005
    slope_threshold: float | None = 0.75
    difficulty_range: tuple = (0.0, 1.0)
    curriculum: bool = True  # rows by difficulty, columns by type; False: a random type and difficulty per tile
    seed: int = 0  # the same terrain on every rank and every run (Isaac Lab draws it unseeded)
    sub_terrains: dict = dataclasses.field(default_factory=dict)


# Isaac Lab's ROUGH_TERRAINS_CFG (isaaclab/terrains/config/rough.py)
ROUGH_TERRAINS_CFG = TerrainGeneratorCfg(sub_terrains={
    "pyramid_stairs": MeshPyramidStairsTerrainCfg(proportion=0.2),
    "pyramid_stairs_inv": MeshPyramidStairsTerrainCfg(proportion=0.2, inverted=True),
    "boxes": MeshRandomGridTerrainCfg(proportion=0.2),
    "random_rough": HfRandomUniformTerrainCfg(proportion=0.2),
    "hf_pyramid_slope": HfPyramidSlopedTerrainCfg(proportion=0.1),
    "hf_pyramid_slope_inv": HfPyramidSlopedTerrainCfg(proportion=0.1, inverted=True),
})


@dataclasses.dataclass(frozen=True)
class TerrainImporterCfg:
    """The scene's ground (Isaac Lab's TerrainImporterCfg, terrain_type "generator"): it replaces the MJCF's floor
    plane, keeping that plane's contact settings. Envs start on rows 0..max_init_terrain_level (None: every row),
    each process spreading its envs over every column."""

    terrain_generator: TerrainGeneratorCfg = ROUGH_TERRAINS_CFG
    max_init_terrain_level: int | None = 5
    floor_geom: str = "floor"  # the MJCF plane the terrain replaces


__all__ = ["SubTerrainCfg", "MeshPyramidStairsTerrainCfg", "MeshRandomGridTerrainCfg", "HfRandomUniformTerrainCfg",
           "HfPyramidSlopedTerrainCfg", "TerrainGeneratorCfg", "ROUGH_TERRAINS_CFG", "TerrainImporterCfg"]
