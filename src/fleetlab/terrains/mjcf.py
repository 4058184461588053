"""The terrain in the MuJoCo model: one height-field asset and geom in place of the MJCF's floor plane, with the
plane's contact settings (contype, conaffinity, condim, friction, solver parameters).

MuJoCo's hfield layout (doc/XMLreference.rst, asset/hfield): rows along y, columns along x, data normalised by the
compiler to [0, 1] and scaled by size[2] above the geom's z, with a base box size[3] deep below the lowest point."""

from __future__ import annotations

import mujoco
import numpy as np

from fleetlab.errors import FleetlabError
from fleetlab.terrains.generator import Terrain

HFIELD = "terrain"
_BASE_DEPTH = 1.0  # m of solid below the lowest point (Isaac Lab's border is 1 m deep)
_COPIED = ("contype", "conaffinity", "condim", "friction", "solref", "solimp", "solmix", "priority", "material",
           "rgba")


def add_terrain(spec: mujoco.MjSpec, terrain: Terrain, floor_geom: str, where: str) -> None:
    floor = next((g for g in spec.worldbody.geoms if g.name == floor_geom), None)
    if floor is None or floor.type != mujoco.mjtGeom.mjGEOM_PLANE:
        raise FleetlabError(f"{where}: the scene has a terrain, so its MJCF needs a floor plane named '{floor_geom}' "
                            "on the worldbody (the terrain takes its place and its contact settings)")
    copied = {name: getattr(floor, name) for name in _COPIED}
    spec.delete(floor)
    low, high = float(terrain.heights.min()), float(terrain.heights.max())
    rx, ry = terrain.half_extents
    nx, ny = terrain.heights.shape
    spec.add_hfield(name=HFIELD, nrow=ny, ncol=nx, size=[rx, ry, max(high - low, 1e-6), _BASE_DEPTH],
                    userdata=terrain.heights.T.astype(np.float32).ravel().tolist())
    x0, y0 = terrain.origin_xy
    geom = spec.worldbody.add_geom(name=floor_geom, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=HFIELD,
                                   pos=[x0 + rx, y0 + ry, low])
    for name, value in copied.items():
        setattr(geom, name, value)


def heights_of(mj_model: mujoco.MjModel, floor_geom: str) -> tuple[np.ndarray, tuple, float]:
    """The terrain as MuJoCo holds it (float32, after the compiler's normalisation): heights [ix, iy] in m, the
    corner vertex (x0, y0) and the vertex spacing. A lookup on these agrees with MuJoCo's own collisions and rays."""
    g = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_GEOM, floor_geom)
    h = int(mj_model.geom_dataid[g])
    nrow, ncol = int(mj_model.hfield_nrow[h]), int(mj_model.hfield_ncol[h])
    adr = int(mj_model.hfield_adr[h])
    rx, ry, top, _ = mj_model.hfield_size[h]
    data = mj_model.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol).T
    pos = mj_model.geom_pos[g]
    heights = (pos[2] + data * top).astype(np.float32)
    return heights, (float(pos[0] - rx), float(pos[1] - ry)), float(2 * rx / (ncol - 1))


__all__ = ["add_terrain", "heights_of", "HFIELD"]
