"""Isaac Lab's TerrainGenerator as one height-field array: num_rows x num_cols tiles (rows by difficulty, columns by
sub-terrain type when `curriculum`), inside a flat border, and the env origin of every tile. The grid is centred
on the world origin, as Isaac Lab's is: tile (r, c) covers x from r·size_x − rows·size_x/2.

Built from the config's own seed, so every rank of a run (and every run) gets the same ground; built once per
process and cached on disk, keyed by a hash of the config (a 10 x 20 grid takes a few seconds to build)."""

from __future__ import annotations

import dataclasses
import hashlib
import os

import numpy as np

from fleetlab.errors import FleetlabError
from fleetlab.terrains.cfg import TerrainGeneratorCfg
from fleetlab.terrains.sub_terrains import BUILDERS

CACHE_DIR = os.path.join(os.path.expanduser("~"), ".cache", "fleetlab", "terrains")
_VERSION = 1  # bump when a builder changes, so old cache files are not read


@dataclasses.dataclass(frozen=True)
class Terrain:
    heights: np.ndarray  # (nx, ny) m, vertex [ix, iy] at (x0 + ix·scale, y0 + iy·scale)
    origin_xy: tuple  # (x0, y0): the corner vertex
    horizontal_scale: float
    origins: np.ndarray  # (rows, cols, 3): each tile's env origin, world frame
    types: np.ndarray  # (rows, cols): index into the config's sub_terrains
    difficulties: np.ndarray  # (rows, cols)

    @property
    def half_extents(self) -> tuple:
        nx, ny = self.heights.shape
        return (nx - 1) * self.horizontal_scale / 2, (ny - 1) * self.horizontal_scale / 2


def _check(cfg: TerrainGeneratorCfg) -> None:
    if not cfg.sub_terrains:
        raise FleetlabError("terrain_generator.sub_terrains is empty: give at least one sub-terrain cfg")
    for name, sub in cfg.sub_terrains.items():
        if type(sub) not in BUILDERS:
            raise FleetlabError(f"terrain_generator.sub_terrains['{name}'] is a {type(sub).__name__}; known: "
                                f"{', '.join(t.__name__ for t in BUILDERS)}")
    if cfg.size[0] != cfg.size[1]:
        raise FleetlabError(f"terrain_generator.size must be square, got {cfg.size}")
    steps = [v / cfg.horizontal_scale for v in (*cfg.size, cfg.border_width)]
    if any(abs(s - round(s)) > 1e-6 for s in steps) or cfg.num_rows < 1 or cfg.num_cols < 1:
        raise FleetlabError("terrain_generator: size and border_width must be whole multiples of horizontal_scale, "
                            "num_rows and num_cols >= 1")


def _layout(cfg: TerrainGeneratorCfg, rng) -> tuple[np.ndarray, np.ndarray]:
    """(types, difficulties) of every tile, as Isaac Lab's _generate_curriculum_terrains / _generate_random_terrains
    choose them."""
    share = np.array([s.proportion for s in cfg.sub_terrains.values()], float)
    share /= share.sum()
    low, high = cfg.difficulty_range
    if cfg.curriculum:
        # column c: the first type whose cumulative share exceeds c/cols (+0.001, as Isaac Lab)
        col_types = [int(np.min(np.where(c / cfg.num_cols + 0.001 < np.cumsum(share))[0])) for c in range(cfg.num_cols)]
        types = np.tile(col_types, (cfg.num_rows, 1))
        row = np.arange(cfg.num_rows)[:, None]
        difficulties = low + (high - low) * (row + rng.uniform(size=(cfg.num_rows, cfg.num_cols))) / cfg.num_rows
    else:
        types = rng.choice(len(share), size=(cfg.num_rows, cfg.num_cols), p=share)
        difficulties = rng.uniform(low, high, size=(cfg.num_rows, cfg.num_cols))
    return types, difficulties


def build(cfg: TerrainGeneratorCfg) -> Terrain:
    _check(cfg)
    rng = np.random.default_rng(cfg.seed)
    types, difficulties = _layout(cfg, rng)
    hs = cfg.horizontal_scale
    tile, border = int(round(cfg.size[0] / hs)), int(round(cfg.border_width / hs))
    heights = np.zeros((cfg.num_rows * tile + 2 * border + 1, cfg.num_cols * tile + 2 * border + 1))
    x0, y0 = -(cfg.num_rows * cfg.size[0] / 2 + cfg.border_width), -(cfg.num_cols * cfg.size[1] / 2 + cfg.border_width)
    origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))
    subs = list(cfg.sub_terrains.values())
    for r in range(cfg.num_rows):
        for c in range(cfg.num_cols):
            sub = subs[types[r, c]]
            tile_heights, origin = BUILDERS[type(sub)](sub, float(difficulties[r, c]), rng, cfg)
            ix, iy = border + r * tile, border + c * tile
            heights[ix:ix + tile + 1, iy:iy + tile + 1] = tile_heights  # neighbours share an edge: both at 0
            origins[r, c] = origin + (x0 + ix * hs, y0 + iy * hs, 0.0)
    return Terrain(heights, (x0, y0), hs, origins, types, difficulties)


def cache_key(cfg: TerrainGeneratorCfg) -> str:
    return hashlib.sha256(f"{_VERSION} {cfg!r}".encode()).hexdigest()[:20]


def generate(cfg: TerrainGeneratorCfg, cache_dir: str | None = None) -> Terrain:
    """The terrain of `cfg`, from the disk cache when it was built before (by any process)."""
    path = os.path.join(cache_dir or CACHE_DIR, f"{cache_key(cfg)}.npz")
    if os.path.isfile(path):
        with np.load(path) as f:
            return Terrain(f["heights"], tuple(f["origin_xy"]), float(f["horizontal_scale"]), f["origins"],
                           f["types"], f["difficulties"])
    terrain = build(cfg)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"  # ranks building at once each write their own file, then rename (atomic)
    with open(tmp, "wb") as f:
        np.savez(f, heights=terrain.heights, origin_xy=np.asarray(terrain.origin_xy),
                 horizontal_scale=terrain.horizontal_scale, origins=terrain.origins, types=terrain.types,
                 difficulties=terrain.difficulties)
    os.replace(tmp, path)
    return terrain


__all__ = ["Terrain", "build", "generate", "cache_key", "CACHE_DIR"]
