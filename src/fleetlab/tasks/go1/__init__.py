"""Unitree Go1 on flat ground, tracking velocity commands: Isaac Lab's Isaac-Velocity-Flat-Unitree-Go1-v0 and its
play variant (no observation noise, no randomization), registered on import."""

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.go1 import agents, cfg

register(TaskEntry("Fleet-Go1-Flat-v0", cfg.go1_flat, aliases=("Isaac-Velocity-Flat-Unitree-Go1-v0",),
                   description="Unitree Go1, flat ground, velocity commands (48 obs, 12 PD joint targets; "
                               "ends on trunk contact)", agents=agents.ALL))
register(TaskEntry("Fleet-Go1-Flat-Play-v0", cfg.go1_flat_play, aliases=("Isaac-Velocity-Flat-Unitree-Go1-Play-v0",),
                   description="Go1 flat, play: no observation noise, no randomization", agents=agents.ALL,
                   plays="Fleet-Go1-Flat-v0"))
