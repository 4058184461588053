"""Humanoid's terms: the classic locomotion terms of fleetlab.tasks.locomotion, with HumanoidCfg's weights."""

from fleetlab.envs.core import Task
from fleetlab.tasks.humanoid.cfg import HumanoidCfg
from fleetlab.tasks.locomotion import make_locomotion_task


def make_task(**overrides) -> Task:
    return make_locomotion_task(HumanoidCfg(**overrides))
