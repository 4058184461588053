"""Cartpole: Isaac Lab's Isaac-Cartpole-v0 (manager-based) and Isaac-Cartpole-Direct-v0, registered on import."""

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.cartpole import agents, cfg

register(TaskEntry("Fleet-Cartpole-v0", cfg.cartpole, aliases=("Isaac-Cartpole-v0",),
                   description="Cartpole, Isaac Lab manager-based terms (obs cart,pole; rewards x dt)",
                   agents=agents.ALL))
register(TaskEntry("Fleet-Cartpole-Direct-v0", cfg.cartpole_direct, aliases=("Isaac-Cartpole-Direct-v0",),
                   description="Cartpole, Isaac Lab Direct terms (obs pole,cart; |pole| > pi/2 ends)",
                   agents=agents.ALL))
