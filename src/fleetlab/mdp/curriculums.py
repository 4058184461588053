"""Curriculum terms (Isaac Lab's isaaclab_tasks locomotion velocity mdp/curriculums.py), each returning an env's new
value when its episode ends."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.errors import FleetlabError


def terrain_levels_vel(env, command_name: str = "base_velocity") -> jax.Array:
    """Isaac Lab's terrain_levels_vel: the env's terrain row goes up when the robot walked further than half a tile
    from its origin, down when it walked less than half of what its command asked for over a whole episode (and
    did not go up); never below 0, and past the top row to a random row. Name the term "terrain_levels": the
    scene's terrain moves the env to the tile of its new level (envs/terrain_tiles.py)."""
    terrain = env.scene.terrain
    if terrain is None:
        raise FleetlabError(f"task '{env.scene.task_id}': terrain_levels_vel moves envs between terrain rows, but the "
                            "scene has no terrain (set scene.terrain to a TerrainImporterCfg)")
    tile = float(env.scene.cfg.terrain.terrain_generator.size[0])
    rows = terrain.origins.shape[0]
    distance = jnp.linalg.norm(env.data.qpos[0:2] - env.env_origin[0:2])
    move_up = distance > tile / 2
    asked = jnp.linalg.norm(env.command(command_name)[0:2]) * env.max_episode_length * env.scene.dt * 0.5
    move_down = (distance < asked) & ~move_up
    level = env.curriculum["terrain_levels"] + move_up.astype(jnp.float32) - move_down.astype(jnp.float32)
    level = jnp.maximum(level, 0.0)
    wrapped = jax.random.randint(env.key, (), 0, rows).astype(jnp.float32)
    return jnp.where(level >= rows, wrapped, level)


__all__ = ["terrain_levels_vel"]
