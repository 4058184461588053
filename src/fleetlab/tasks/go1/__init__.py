"""Unitree Go1 tracking velocity commands, on flat ground and on Isaac Lab's rough terrains: Isaac Lab's
Isaac-Velocity-Flat-Unitree-Go1-v0, Isaac-Velocity-Rough-Unitree-Go1-v0 and their play variants (no observation
noise, no randomization), registered on import."""

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.go1 import agents, cfg, rough_agents, rough_cfg

register(TaskEntry("Fleet-Go1-Flat-v0", cfg.go1_flat, aliases=("Isaac-Velocity-Flat-Unitree-Go1-v0",),
                   description="Unitree Go1, flat ground, velocity commands (48 obs, 12 PD joint targets; "
                               "ends on trunk contact)", agents=agents.ALL))
register(TaskEntry("Fleet-Go1-Flat-Play-v0", cfg.go1_flat_play, aliases=("Isaac-Velocity-Flat-Unitree-Go1-Play-v0",),
                   description="Go1 flat, play: no observation noise, no randomization", agents=agents.ALL,
                   plays="Fleet-Go1-Flat-v0"))
register(TaskEntry("Fleet-Go1-Rough-v0", rough_cfg.go1_rough, aliases=("Isaac-Velocity-Rough-Unitree-Go1-v0",),
                   description="Unitree Go1, Isaac Lab's rough terrains (stairs, boxes, rough, slopes) with a terrain "
                               "curriculum, velocity and heading commands (235 obs: 48 + a 187-point height scan)",
                   agents=rough_agents.ALL))
register(TaskEntry("Fleet-Go1-Rough-Play-v0", rough_cfg.go1_rough_play,
                   aliases=("Isaac-Velocity-Rough-Unitree-Go1-Play-v0",),
                   description="Go1 rough, play: a 5 x 5 grid of random tiles, no observation noise, no randomization",
                   agents=rough_agents.ALL, plays="Fleet-Go1-Rough-v0"))
