"""Isaac-Velocity-Rough-Unitree-Go1-v0's config (Isaac Lab's UnitreeGo1RoughEnvCfg) and its play variant, from
../shared/reference/go1-rough.md: the flat task (tasks/go1/cfg.py) on Isaac Lab's ROUGH_TERRAINS_CFG with the Go1's
overrides, a 187-point height scan (235 observations), heading commands for every env, the terrain-level
curriculum, and the rough task's reward weights.

The terrain is one MuJoCo height field (fleetlab.terrains): stairs and boxes keep their heights, and each vertical
edge becomes a ramp 0.1 m wide, because MuJoCo collides a mesh geom through its convex hull and MJX's JAX
implementation has no mesh-as-union. Both MJX implementations collide the Go1's foot spheres and trunk box with it."""

from __future__ import annotations

import dataclasses
import math

from fleetlab import mdp
from fleetlab.tasks.go1.cfg import COMMAND, go1_flat

# Isaac Lab's UnitreeGo1RoughEnvCfg.__post_init__ scales the boxes and the rough ground down for the small robot
GO1_ROUGH_TERRAINS_CFG = dataclasses.replace(mdp.ROUGH_TERRAINS_CFG, sub_terrains={
    **mdp.ROUGH_TERRAINS_CFG.sub_terrains,
    "boxes": mdp.MeshRandomGridTerrainCfg(proportion=0.2, grid_height_range=(0.025, 0.1)),
    "random_rough": mdp.HfRandomUniformTerrainCfg(proportion=0.2, noise_range=(0.01, 0.06), noise_step=0.01),
})


def go1_rough() -> mdp.ManagerBasedRLEnvCfg:
    flat = go1_flat()
    policy = flat.observations["policy"].terms
    rewards = {k: v for k, v in flat.rewards.items() if k != "flat_orientation_l2"}  # weight 0.0 on rough: skipped
    rewards["feet_air_time"] = dataclasses.replace(rewards["feet_air_time"], weight=0.01)
    command = flat.commands["base_velocity"]
    return flat.replace(
        scene=dataclasses.replace(flat.scene, terrain=mdp.TerrainImporterCfg(
            terrain_generator=GO1_ROUGH_TERRAINS_CFG, max_init_terrain_level=5)),
        commands={"base_velocity": dataclasses.replace(
            command, heading_command=True, rel_heading_envs=1.0,
            ranges=dataclasses.replace(command.ranges, heading=(-math.pi, math.pi)))},
        observations={"policy": mdp.ObsGroup(terms={
            **policy,
            "height_scan": mdp.ObsTerm(func=mdp.height_scan, params={"offset": 0.5},
                                       noise=mdp.UniformNoise(-0.1, 0.1), clip=(-1.0, 1.0)),
        })},
        rewards=rewards,
        curriculum={"terrain_levels": mdp.CurrTerm(func=mdp.terrain_levels_vel, params=COMMAND)},
        metrics={**flat.metrics, "terrain_level": mdp.MetricTerm(func=mdp.terrain_level,
                                                                 description="mean terrain row (0-9)")},
    )


def go1_rough_play() -> mdp.ManagerBasedRLEnvCfg:
    """Isaac Lab's _PLAY variant: a 5 x 5 grid of random tiles (no curriculum layout), envs on every row, no
    observation noise, no randomization. The terrain_levels term stays, so levels still move."""
    cfg = go1_rough()
    policy = cfg.observations["policy"]
    terrain = dataclasses.replace(cfg.scene.terrain, max_init_terrain_level=None, terrain_generator=dataclasses.replace(
        GO1_ROUGH_TERRAINS_CFG, num_rows=5, num_cols=5, curriculum=False))
    return cfg.replace(scene=dataclasses.replace(cfg.scene, terrain=terrain),
                       observations={"policy": mdp.ObsGroup(terms=policy.terms, enable_corruption=False)},
                       events={k: v for k, v in cfg.events.items() if v.mode != "startup"})
