"""Terrains (Isaac Lab's isaaclab.terrains): a generator of sub-terrain tiles rasterised into one MuJoCo height
field, the env origin of every tile, and the height under any point. Beneath envs: it knows MuJoCo and numpy only."""

from fleetlab.terrains.cfg import (
    ROUGH_TERRAINS_CFG,
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    MeshPyramidStairsTerrainCfg,
    MeshRandomGridTerrainCfg,
    SubTerrainCfg,
    TerrainGeneratorCfg,
    TerrainImporterCfg,
)
from fleetlab.terrains.generator import Terrain, generate
from fleetlab.terrains.height_field import HeightField

__all__ = ["ROUGH_TERRAINS_CFG", "HfPyramidSlopedTerrainCfg", "HfRandomUniformTerrainCfg",
           "MeshPyramidStairsTerrainCfg", "MeshRandomGridTerrainCfg", "SubTerrainCfg", "TerrainGeneratorCfg",
           "TerrainImporterCfg", "Terrain", "generate", "HeightField"]
