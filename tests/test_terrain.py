"""Rough terrain (issue I): the generator's tiles and layout, its seed and cache, the height scan against MuJoCo's
own rays, the terrain-level curriculum on scripted walks, and the Go1 rough task on both MJX implementations."""

import dataclasses
import json
import os
import re
import types

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
import torch
from conftest import PYTHON, run_cmd

from fleetlab import mdp
from fleetlab.envs import make
from fleetlab.envs.core import Env
from fleetlab.errors import FleetlabError
from fleetlab.tasks.go1.rough_cfg import GO1_ROUGH_TERRAINS_CFG, go1_rough
from fleetlab.terrains import generator, sub_terrains
from fleetlab.terrains.cfg import (
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    MeshPyramidStairsTerrainCfg,
    MeshRandomGridTerrainCfg,
    TerrainGeneratorCfg,
)

TASK = "Isaac-Velocity-Rough-Unitree-Go1-v0"
GEN = TerrainGeneratorCfg()  # 8 m tiles, 0.1 m / 0.005 m
RNG = np.random.default_rng(0)


# -- the sub-terrains ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inverted", [False, True])
@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_pyramid_stairs(difficulty, inverted):
    heights, origin = sub_terrains.pyramid_stairs(MeshPyramidStairsTerrainCfg(inverted=inverted), difficulty, RNG, GEN)
    sign = -1 if inverted else 1
    step = 0.05 + difficulty * (0.23 - 0.05)
    assert heights.shape == (81, 81)
    assert np.all(heights[:10] == 0) and np.all(heights[:, -10:] == 0), "a 1 m border at z = 0"
    # along the middle row: six 0.3 m treads, then the 2.4 m platform at 7 steps
    profile = sign * heights[:41, 40] / step
    assert np.allclose(profile[10:28], np.repeat(np.arange(1, 7), 3))
    assert np.allclose(profile[28:41], 7) and np.isclose(origin[2], sign * 7 * step)
    assert np.allclose(origin[:2], 4.0) and np.allclose(heights, heights.T), "square rings"


def test_random_grid_boxes():
    cfg = MeshRandomGridTerrainCfg(grid_height_range=(0.025, 0.1))
    for difficulty in (0.0, 1.0):
        heights, origin = sub_terrains.random_grid(cfg, difficulty, RNG, GEN)
        h = 0.025 + difficulty * 0.075
        assert np.abs(heights).max() <= h + 1e-9 and np.isclose(origin[2], h)
        assert np.all(heights[30:51, 30:51] == h), "the 2 m platform at +h"
        assert np.all(heights[0] == 0) and np.all(heights[:, 0] == 0), "the border ring left by 17 x 0.45 m cells"
        cells = heights[2:29:5, 2:29:5]  # one vertex inside each of the first cells
        assert len(np.unique(cells)) > 10, "each cell its own height"
        assert np.all(heights[2:6, 2:6] == heights[2, 2]), "a cell is flat on top"


def test_random_uniform_ignores_difficulty():
    cfg = HfRandomUniformTerrainCfg(noise_range=(0.01, 0.06), noise_step=0.01)
    for difficulty in (0.0, 1.0):
        heights, origin = sub_terrains.random_uniform(cfg, difficulty, RNG, GEN)
        inner = heights[3:78, 3:78]
        assert np.allclose(np.unique(np.round(inner, 4)), np.arange(0.01, 0.061, 0.01))
        assert np.all(heights[:3] == 0) and np.all(heights[78:] == 0), "a rim of 3 vertices at 0"
        assert np.isclose(origin[2], heights[30:51, 30:51].max())


@pytest.mark.parametrize("inverted", [False, True])
def test_pyramid_slope_scales_with_difficulty(inverted):
    cfg = HfPyramidSlopedTerrainCfg(inverted=inverted)
    sign = -1 if inverted else 1
    peaks = []
    for difficulty in (0.0, 0.5, 1.0):
        heights, _ = sub_terrains.pyramid_slope(cfg, difficulty, RNG, GEN)
        peaks.append(sign * heights.max() if not inverted else sign * heights.min())
        assert np.all(heights[:3] == 0)
        # rise per run on the flank: 0.4 * difficulty (within one vertical step per vertex)
        flank = sign * heights[3:20, 40]
        assert np.allclose(np.diff(flank), 0.4 * difficulty * 0.1, atol=0.005)
    top = 0.4 * 3.75 * (27 / 37) ** 2  # H at slope 0.4, clipped at the 2 m platform's corner
    assert peaks[0] == 0 and np.isclose(peaks[2], top, atol=0.01) and np.isclose(peaks[1], top / 2, atol=0.01)


# -- the grid --------------------------------------------------------------------------------------------------

def test_curriculum_layout_and_origins():
    terrain = generator.build(GO1_ROUGH_TERRAINS_CFG)
    assert terrain.heights.shape == (1201, 2001), "10 x 20 tiles of 8 m plus a 20 m border, at 0.1 m"
    names = list(GO1_ROUGH_TERRAINS_CFG.sub_terrains)
    columns = [names[t] for t in terrain.types[0]]
    assert columns == (["pyramid_stairs"] * 4 + ["pyramid_stairs_inv"] * 4 + ["boxes"] * 4 + ["random_rough"] * 4
                       + ["hf_pyramid_slope"] * 2 + ["hf_pyramid_slope_inv"] * 2)
    assert (terrain.types == terrain.types[0]).all()
    rows = np.arange(10)[:, None]
    assert ((terrain.difficulties >= rows / 10) & (terrain.difficulties < (rows + 1) / 10)).all()
    centres = np.stack(np.meshgrid((np.arange(10) + 0.5) * 8 - 40, (np.arange(20) + 0.5) * 8 - 80, indexing="ij"), -1)
    assert np.allclose(terrain.origins[..., :2], centres)
    assert np.all(terrain.heights[:200] == 0) and np.all(terrain.heights[:, -200:] == 0), "the 20 m border"
    # the stairs' origin is their platform, 7 steps up; harder rows have taller steps
    stairs = terrain.origins[:, 0, 2]
    assert np.all(np.diff(stairs) > 0) and np.all(terrain.origins[:, 4, 2] < 0)


def test_random_layout_for_play():
    cfg = dataclasses.replace(GO1_ROUGH_TERRAINS_CFG, num_rows=5, num_cols=5, curriculum=False)
    terrain = generator.build(cfg)
    assert terrain.heights.shape == (801, 801) and len(np.unique(terrain.types)) > 2
    assert not np.all(np.diff(terrain.difficulties[:, 0]) > 0)


def test_seeded_and_cached(tmp_path):
    first = generator.generate(GO1_ROUGH_TERRAINS_CFG, cache_dir=str(tmp_path))
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name == f"{generator.cache_key(GO1_ROUGH_TERRAINS_CFG)}.npz"
    again = generator.generate(GO1_ROUGH_TERRAINS_CFG, cache_dir=str(tmp_path))  # read back
    rebuilt = generator.build(GO1_ROUGH_TERRAINS_CFG)
    for a, b in ((first, again), (first, rebuilt)):
        assert np.array_equal(a.heights, b.heights) and np.array_equal(a.origins, b.origins)
    other = dataclasses.replace(GO1_ROUGH_TERRAINS_CFG, seed=1)
    assert generator.cache_key(other) != generator.cache_key(GO1_ROUGH_TERRAINS_CFG)
    assert not np.array_equal(generator.build(other).heights, first.heights)


def test_bad_generator_configs_are_one_line_errors():
    with pytest.raises(FleetlabError, match="sub_terrains is empty"):
        generator.build(TerrainGeneratorCfg())
    with pytest.raises(FleetlabError, match="whole multiples"):
        generator.build(dataclasses.replace(GO1_ROUGH_TERRAINS_CFG, size=(8.05, 8.05)))


# -- the env ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def core():
    return Env(go1_rough(), "Fleet-Go1-Rough-v0", impl="jax")


def test_scan_matches_mj_ray(core):
    """The height scan at 1,000 random poses (half of them on tile edges) against MuJoCo's mj_ray on the same
    model: trunk z - hit z - 0.5 at each of the 187 yaw-turned grid points, within one vertical step."""
    m = core.scene.mj_model
    data = mujoco.MjData(m)
    data.qpos[2] = -100.0  # the robot out of the rays' way
    mujoco.mj_forward(m, data)
    rng = np.random.default_rng(1)
    n = 1000
    xy = np.stack([rng.uniform(-44, 44, n), rng.uniform(-84, 84, n)], 1)
    xy[: n // 2] = np.round(xy[: n // 2] / 8) * 8 + rng.uniform(-0.3, 0.3, (n // 2, 2))  # tile edges
    yaw = rng.uniform(-np.pi, np.pi, n)
    z = rng.uniform(0.2, 2.5, n)
    qpos = np.zeros((n, m.nq), np.float32)
    qpos[:, 0:2], qpos[:, 2] = xy, z
    qpos[:, 3], qpos[:, 6] = np.cos(yaw / 2), np.sin(yaw / 2)
    scan = jax.vmap(lambda q: mdp.height_scan(types.SimpleNamespace(scene=core.scene,
                                                                    data=types.SimpleNamespace(qpos=q))))
    scanned = np.asarray(scan(jnp.asarray(qpos)))
    assert scanned.shape == (n, 187)
    # the same grid, turned by yaw, as rays from 20 m above straight down
    gx, gy = np.meshgrid(np.arange(-0.8, 0.80001, 0.1), np.arange(-0.5, 0.50001, 0.1), indexing="xy")
    grid = np.stack([gx.ravel(), gy.ravel()], 1)
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    px = xy[:, 0:1] + c * grid[:, 0] - s * grid[:, 1]
    py = xy[:, 1:2] + s * grid[:, 0] + c * grid[:, 1]
    starts = np.stack([px.ravel(), py.ravel(), np.full(px.size, 20.0)], 1)
    down, geomid = np.array([0.0, 0.0, -1.0]), np.zeros(1, np.int32)
    dist = np.array([mujoco.mj_ray(m, data, start, down, None, 1, -1, geomid) for start in starts])
    assert (dist > 0).all(), "every ray hits the terrain"
    expected = z[:, None] - (20.0 - dist.reshape(n, 187)) - 0.5
    assert np.abs(scanned - expected).max() <= 1e-4, "well inside one vertical step (5 mm)"


def _walk(core, level, walked, command, key=0):
    """terrain_levels_vel for an env that ended its episode `walked` m from its origin under `command` (m/s)."""
    qpos = np.array(core.scene.default_qpos, np.float32)
    origin = jnp.asarray([3.0, -2.0, 0.5])
    qpos[0:2] = np.asarray(origin[:2]) + [walked, 0.0]
    data = types.SimpleNamespace(qpos=jnp.asarray(qpos), qvel=jnp.zeros(core.scene.mj_model.nv))  # all it reads
    env = core._sample_env(core._made(), data).replace(
        curriculum={"terrain_levels": jnp.float32(level)}, env_origin=origin, key=jax.random.PRNGKey(key),
        commands={"base_velocity": {"command": jnp.asarray([command, 0.0, 0.0])}})
    return float(mdp.terrain_levels_vel(env))


def test_terrain_levels_move_up_and_down(core):
    # 20 s episodes: a 1 m/s command asks for 20 m, down below 10 m; up beyond half a tile (4 m)
    assert _walk(core, 3, walked=4.5, command=1.0) == 4, "far enough: up"
    assert _walk(core, 3, walked=3.0, command=1.0) == 2, "less than half the asked distance: down"
    assert _walk(core, 3, walked=3.0, command=0.2) == 3, "asked 4 m, walked 3 m: stays"
    assert _walk(core, 0, walked=0.0, command=1.0) == 0, "never below 0"
    assert _walk(core, 5, walked=0.0, command=0.0) == 5, "a standing env never moves down"
    wrapped = {_walk(core, 9, walked=5.0, command=1.0, key=k) for k in range(40)}
    assert wrapped <= set(range(10)) and len(wrapped) > 3, "past the top row: a random row"


@pytest.fixture(scope="module")
def rough():
    return make("Isaac-Velocity-Rough-Unitree-Go1-v0", num_envs=20, seed=0, impl="jax")


def test_rough_task_steps_on_the_height_field(rough):
    """235 observations; every env starts on rows 0-5, the columns spread over all 20; the feet and trunk rest on
    the height field (no env falls through: each stays above the ground under it)."""
    env = rough
    env.reset()
    assert env.observations["policy"].shape == (20, 235)
    tiles = env.state.persistent["terrain"]
    assert sorted(np.asarray(tiles["column"]).tolist()) == list(range(20))
    assert np.asarray(tiles["level"]).max() <= 5
    for _ in range(30):
        env.step(torch.zeros(20, 12))
    qpos = np.asarray(env.state.qpos)
    ground = np.asarray(env.core.scene.height_field(jnp.asarray(qpos[:, 0:2])))
    assert (qpos[:, 2] - ground > 0.1).all(), "the trunk stays above the terrain"
    g = torch.Generator().manual_seed(0)
    for _ in range(200):  # random actions: robots fall, none is launched (MuJoCo Warp's are: see below)
        env.step(torch.randn(20, 12, generator=g))
        assert np.abs(np.asarray(env.state.qvel[:, 0:3])).max() < 8
    obs = env.observations["policy"][:, 48:]
    assert (obs.abs() <= 1.0).all(), "the scan is clipped to [-1, 1]"


def test_an_episode_end_moves_the_env_to_its_new_tile(rough):
    """Through the env's step: envs whose episode ends 5 m from their origin go one row up, keep their column, and
    start the next episode at the new tile's origin (within the reset's +-0.5 m)."""
    env = rough
    env.reset()
    tiles = {k: np.asarray(v) for k, v in env.state.persistent["terrain"].items()}
    origins = np.asarray(env.core.tiles.origins)
    assert np.allclose(env.state.persistent["curriculum"]["terrain_levels"], tiles["level"])
    start = origins[tiles["level"], tiles["column"]]
    assert np.allclose(env.state.qpos[:, 0:2], start[:, 0:2], atol=0.5 + 1e-6)
    qpos = env.state.qpos.at[:, 0:2].set(jnp.asarray(start[:, 0:2] + [5.0, 0.0], jnp.float32))
    env.state = env.state.replace(qpos=qpos, episode_length=jnp.full(20, env.core.max_episode_length - 1, jnp.int32))
    _, _, terminated, truncated, _ = env.step(torch.zeros(20, 12))
    # every episode ends (the time-out; an env moved onto higher ground may touch it with its trunk first)
    assert (terminated | truncated).all() and truncated.sum() >= 10
    level = np.asarray(env.state.persistent["terrain"]["level"])
    assert np.array_equal(level, tiles["level"] + 1)
    assert np.array_equal(np.asarray(env.state.persistent["terrain"]["column"]), tiles["column"])
    assert np.allclose(env.state.qpos[:, 0:2], origins[level, tiles["column"]][:, 0:2], atol=0.5 + 1e-6)


def test_play_variant():
    env = make("Isaac-Velocity-Rough-Unitree-Go1-Play-v0", num_envs=8, seed=0, impl="jax")
    terrain = env.core.scene.terrain
    assert terrain.origins.shape[:2] == (5, 5)
    # no noise: the scan part of the observation is the clipped height scan itself
    core = env.core
    qpos = env.state.qpos
    scan = jax.vmap(lambda q: mdp.height_scan(types.SimpleNamespace(scene=core.scene,
                                                                    data=types.SimpleNamespace(qpos=q))))(qpos)
    assert np.allclose(env.observations["policy"][:, 48:].numpy(), np.clip(np.asarray(scan), -1, 1), atol=1e-5)


def test_a_terrain_needs_a_floor_plane_and_the_scan_needs_a_terrain():
    from fleetlab.tasks.go1.cfg import go1_flat

    cfg = go1_rough()
    bad = cfg.replace(scene=dataclasses.replace(cfg.scene, terrain=dataclasses.replace(cfg.scene.terrain,
                                                                                       floor_geom="ground")))
    with pytest.raises(FleetlabError, match="floor plane named 'ground'"):
        Env(bad, "rough", impl="jax")
    flat = go1_flat()
    scan = mdp.ObsGroup(terms={**flat.observations["policy"].terms,
                               "height_scan": mdp.ObsTerm(func=mdp.height_scan)})
    with pytest.raises(FleetlabError, match="height_scan reads the terrain"):
        Env(flat.replace(observations={"policy": scan}), "flat", impl="jax")


def test_mujoco_warp_is_refused_on_height_fields_and_auto_picks_jax():
    """MJX 3.17's MuJoCo Warp launches robots off height fields (docs/terrain.md): "warp" is a one-line error, and
    "auto" (Warp on a GPU) steps the terrain with the JAX implementation."""
    with pytest.raises(FleetlabError, match="unstable on MuJoCo Warp.*use --physics_impl jax"):
        make(TASK, num_envs=2, impl="warp")
    cfg = go1_rough()
    core = Env(cfg.replace(physics=dataclasses.replace(cfg.physics, impl="auto")), "rough", impl=None)
    assert core.physics.impl == "jax"


def test_warp_launches_robots_off_the_height_field():
    """The measurement behind the refusal, kept so that a fixed MuJoCo Warp shows up here: random actions on random
    rough ground launch Go1s (> 8 m/s) on Warp. (The JAX implementation launches none: the test above.) Warp is
    brought in through Env.with_physics, which the refusal does not guard."""
    from fleetlab.envs.vec_env import VecEnv
    from fleetlab.sim import load_physics

    cfg = go1_rough()
    subs = cfg.scene.terrain.terrain_generator.sub_terrains
    gen = dataclasses.replace(cfg.scene.terrain.terrain_generator, sub_terrains={"random_rough": subs["random_rough"]})
    cfg = cfg.replace(scene=dataclasses.replace(cfg.scene, terrain=dataclasses.replace(cfg.scene.terrain,
                                                                                       terrain_generator=gen)))
    core = Env(cfg, "rough", impl="jax")
    warp = load_physics(core.scene.mj_model, sim_dt=cfg.scene.sim_dt, decimation=cfg.scene.decimation, impl="warp",
                        num_envs=40, options=cfg.physics)
    env = VecEnv(core.with_physics(warp), num_envs=40, seed=0)
    env._check_finite = lambda finite: None  # count the launches instead of stopping at the first NaN
    g = torch.Generator().manual_seed(0)
    fast = np.zeros(40, bool)
    for _ in range(200):
        env.step(torch.randn(40, 12, generator=g))
        v = np.abs(np.asarray(env.state.qvel[:, 0:3])).max(1)
        fast |= (v > 8) | ~np.isfinite(v)
    assert fast.sum() > 0, "no Go1 launched on Warp: check whether MuJoCo Warp's height fields are fixed"


@pytest.mark.slow
def test_two_processes_share_one_terrain_and_pool_the_levels(tmp_path):
    """torchrun, 2 processes (gloo), seeds apart: the same terrain and origins on both ranks, each rank's envs over
    every column, and the logged Curriculum/terrain_levels the mean over BOTH ranks' envs."""
    from conftest import REPO, torchrun

    proc = torchrun(2, [os.path.join(REPO, "tests", "mp", "rough_ranks.py")], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [json.load(open(tmp_path / f"result_{r}.json")) for r in (0, 1)]
    assert ranks[0]["terrain"] == ranks[1]["terrain"] and ranks[0]["origins"] == ranks[1]["origins"]
    for r in ranks:
        assert sorted(r["columns"]) == list(range(20))
    mean = [float(np.mean(r["levels"])) for r in ranks]
    assert mean[0] != mean[1], "seeds apart: different starting rows"
    assert ranks[0]["pooled"] == pytest.approx((mean[0] + mean[1]) / 2)
    assert ranks[1]["pooled"] == ranks[0]["pooled"]


@pytest.mark.slow
def test_two_process_training_keeps_identical_weights(tmp_path):
    from conftest import torchrun

    proc = torchrun(2, ["-m", "fleetlab", "train", "--library", "rsl_rl", "--task", TASK, "--headless",
                        "--distributed", "--num_envs=16", "--max_iterations=2"],
                    cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(tmp_path)
    assert summary["world_size"] == 2 and summary["num_envs_total"] == 32
    assert summary["checksums_identical"], [r["checksum"] for r in summary["ranks"]]
    assert "Curriculum/terrain_levels" in summary["final"]


def _summary(root):
    found = [os.path.join(d, "summary.json") for d, _, f in os.walk(root) if "summary.json" in f]
    assert len(found) == 1, found
    with open(found[0]) as f:
        return json.load(f)


@pytest.mark.slow
@pytest.mark.parametrize("library", ["rsl_rl", "rl_games", "skrl", "brax"])
def test_short_training_run(tmp_path, library):
    impl = "jax"  # MuJoCo Warp is refused on height fields (test_mujoco_warp_is_refused_on_height_fields...)
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", library, "--task", TASK, "--num_envs", "16",
                    "--max_iterations", "2", "--headless", "--physics_impl", impl], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(tmp_path)
    assert summary["task"] == "Fleet-Go1-Rough-v0" and summary["physics_impl"] == impl
    assert summary["checksums_identical"]
    if library == "rsl_rl":  # play the checkpoint on the play variant: errors, falls and the terrain level
        proc = run_cmd([PYTHON, "-m", "fleetlab", "play", "--library", library, "--task", TASK, "--num_envs", "4",
                        "--steps", "40", "--headless", "--physics_impl", impl], cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert re.search(r"ended by termination; .*mean terrain_level \d", proc.stdout), proc.stdout[-2000:]


def test_warp_on_rough_terrain_is_a_one_line_cli_error(tmp_path):
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", "rsl_rl", "--task", TASK, "--num_envs", "4",
                    "--max_iterations", "1", "--headless", "--physics_impl", "warp"], cwd=tmp_path, timeout=300)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("fleetlab: error: task 'Fleet-Go1-Rough-v0'") and "Traceback" not in proc.stderr
