"""Ant: Isaac Lab's Isaac-Ant-v0 (manager-based classic), registered on import."""

from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.ant import agents, cfg

register(TaskEntry("Fleet-Ant-v0", cfg.ant, aliases=("Isaac-Ant-v0",),
                   description="Ant, Isaac Lab classic terms (60 obs, 8 efforts x 7.5 Nm; walk to +x; "
                               "ends below 0.31 m)",
                   agents=agents.ALL))
