"""A pendulum swing-up task for fleetlab, in a package of its own (docs/adding_a_task.md walks through it).

Importing this package registers the task. fleetlab finds it with `--import fleetlab_pendulum`, or through the
`fleetlab.tasks` entry point declared in pyproject.toml once the package is installed."""

from fleetlab.envs import TaskEntry, register
from fleetlab_pendulum import agents, cfg

register(TaskEntry("Pendulum-SwingUp-v0", cfg.pendulum_swing_up,
                   description="Pendulum swing-up: a 2 N m motor pumps a 1 kg bob from hanging to upright",
                   agents=agents.ALL))
