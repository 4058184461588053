"""Isaac-Ant-v0's config (Isaac Lab's manager-based classic Ant)."""

from __future__ import annotations

import dataclasses
import math
import os

from fleetlab.tasks.locomotion import LocomotionCfg

XML = os.path.join(os.path.dirname(__file__), "ant.xml")


@dataclasses.dataclass(frozen=True)
class AntCfg(LocomotionCfg):
    xml_path: str = XML
    num_actions: int = 8
    num_observations: int = 60
    reward_weights: dict = dataclasses.field(default_factory=lambda: {
        "progress": 1.0, "alive": 0.5, "upright": 0.1, "move_to_target": 0.5,
        "action_l2": -0.005, "energy": -0.05, "joint_pos_limits": -0.1,
    })
    termination_height: float = 0.31
    joint_limit_threshold: float = 0.99
    joint_vel_scale: float = 0.2
    feet_force_scale: float = 0.1
    feet: tuple = ("front_left_foot", "front_right_foot", "left_back_foot", "right_back_foot")
    default_joint_pos: dict = dataclasses.field(default_factory=lambda: {
        "front_left_foot": math.pi / 4, "front_right_foot": -math.pi / 4,
        "left_back_foot": -math.pi / 4, "right_back_foot": math.pi / 4,
    })

