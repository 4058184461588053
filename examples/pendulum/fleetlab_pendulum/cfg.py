"""The swing-up task's config: physics rates, action scale, reward weights and the reset distribution."""

from __future__ import annotations

import dataclasses
import math
import os

XML = os.path.join(os.path.dirname(__file__), "pendulum.xml")


@dataclasses.dataclass(frozen=True)
class PendulumSwingUpCfg:
    # what fleetlab's env core reads (fleetlab.envs.core.TaskCfg)
    xml_path: str = XML
    sim_dt: float = 0.01
    decimation: int = 2  # 50 Hz policy
    episode_length_s: float = 5.0  # 250 policy steps
    action_scale: float = 1.0  # ctrl in [-1, 1], the motor's gear makes it +-2 N m: too weak to lift the bob directly
    num_actions: int = 1
    num_observations: int = 3  # cos(angle), sin(angle), angular velocity / 8
    reward_weights: dict = dataclasses.field(default_factory=lambda: {"upright": 1.0, "spin": -0.01, "effort": -0.01})
    reward_scale_by_dt: bool = True  # Isaac Lab's convention: the return does not depend on the policy rate
    # what this task's own terms read
    start_angle_noise: float = 0.3  # rad around hanging down
    start_velocity_noise: float = 0.5  # rad/s
    upright_tolerance: float = 0.2  # rad: the play metric "|angle| < 0.2 rad"
    max_speed: float = 20.0  # rad/s: faster ends the episode (a diverging policy)
    hanging: float = math.pi
