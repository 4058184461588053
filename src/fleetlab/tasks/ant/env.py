"""Ant's terms: the classic locomotion terms of fleetlab.tasks.locomotion, with AntCfg's weights."""

from fleetlab.envs.core import Task
from fleetlab.tasks.ant.cfg import AntCfg
from fleetlab.tasks.locomotion import make_locomotion_task


def make_task(**overrides) -> Task:
    return make_locomotion_task(AntCfg(**overrides))
