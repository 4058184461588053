"""Humanoid: Isaac Lab's Isaac-Humanoid-v0 (manager-based classic), registered on import."""

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.humanoid import agents, cfg

register(TaskEntry("Fleet-Humanoid-v0", cfg.humanoid, aliases=("Isaac-Humanoid-v0",),
                   description="Humanoid, Isaac Lab classic terms (87 obs, 21 efforts; walk to +x; ends below 0.8 m)",
                   agents=agents.ALL))
