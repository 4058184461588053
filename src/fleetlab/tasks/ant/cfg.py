"""Isaac-Ant-v0's config (Isaac Lab's manager-based classic Ant)."""

from __future__ import annotations

import math
import os

from fleetlab import mdp
from fleetlab.tasks.locomotion import classic_locomotion

XML = os.path.join(os.path.dirname(__file__), "ant.xml")


def ant() -> mdp.ManagerBasedRLEnvCfg:
    return classic_locomotion(
        XML, feet=("front_left_foot", "front_right_foot", "left_back_foot", "right_back_foot"),
        weights={"progress": 1.0, "alive": 0.5, "upright": 0.1, "move_to_target": 0.5, "action_l2": -0.005,
                 "energy": -0.05, "joint_pos_limits": -0.1},
        termination_height=0.31, joint_limit_threshold=0.99, joint_vel_scale=0.2, feet_force_scale=0.1,
        default_joint_pos={"front_left_foot": math.pi / 4, "front_right_foot": -math.pi / 4,
                           "left_back_foot": -math.pi / 4, "right_back_foot": math.pi / 4})
