"""Which tile of a generated terrain each env walks on (Isaac Lab's TerrainImporter: terrain_levels, terrain_types,
env_origins), as a per-env pair {"level": row, "column": column} in the State's `persistent` part.

- At the start: rows uniform in 0..max_init_terrain_level; columns spread evenly over every column by the env's
  place in its process's batch (`spread` = index / count), so each rank covers every sub-terrain type.
- With a curriculum term named "terrain_levels" (as Isaac Lab switches the curriculum on when that term exists),
  the level follows that term's value each time an episode ends; without one, envs keep their tile.
- An env's origin is its tile's origin: reset events spawn the root relative to it."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.terrains import Terrain, TerrainImporterCfg

LEVEL_TERM = "terrain_levels"


class TerrainTiles:
    def __init__(self, cfg: TerrainImporterCfg, terrain: Terrain, follows_curriculum: bool):
        self.origins = jnp.asarray(terrain.origins, jnp.float32)  # (rows, cols, 3)
        self.num_rows, self.num_cols = terrain.origins.shape[:2]
        top = self.num_rows - 1
        self.max_init_level = top if cfg.max_init_terrain_level is None else min(cfg.max_init_terrain_level, top)
        self.follows_curriculum = follows_curriculum

    def initial(self, key: jax.Array, spread: jax.Array | None) -> dict:
        k_level, k_column = jax.random.split(key)
        level = jax.random.randint(k_level, (), 0, self.max_init_level + 1)
        if spread is None:  # no place in a batch known (a single env): a random column
            column = jax.random.randint(k_column, (), 0, self.num_cols)
        else:
            column = jnp.minimum(jnp.floor(spread * self.num_cols), self.num_cols - 1).astype(jnp.int32)
        return {"level": level.astype(jnp.int32), "column": column}

    def origin(self, tile: dict) -> jax.Array:
        return self.origins[tile["level"], tile["column"]]

    def after_curriculum(self, tile: dict, curriculum: dict) -> dict:
        if not self.follows_curriculum:
            return tile
        return {"level": curriculum[LEVEL_TERM].astype(jnp.int32), "column": tile["column"]}


__all__ = ["TerrainTiles", "LEVEL_TERM"]
