"""Isaac-Humanoid-v0's config (Isaac Lab's manager-based classic Humanoid)."""

from __future__ import annotations

import os

from fleetlab import mdp
from fleetlab.tasks.locomotion import classic_locomotion

XML = os.path.join(os.path.dirname(__file__), "humanoid.xml")


def humanoid() -> mdp.ManagerBasedRLEnvCfg:
    return classic_locomotion(
        XML, feet=("left_foot", "right_foot"),
        weights={"progress": 1.0, "alive": 2.0, "upright": 0.1, "move_to_target": 0.5, "action_l2": -0.01,
                 "energy": -0.005, "joint_pos_limits": -0.25},
        termination_height=0.8, joint_limit_threshold=0.98, ang_vel_scale=0.25, joint_vel_scale=0.1,
        feet_force_scale=0.01,
        # At most 14 contacts touch the floor (4 foot and 2 shin capsules with 2 each, 2 hand spheres with 1), 4 rows
        # each (pyramidal, condim 3), plus 21 joint limits: 77 rows. MuJoCo C over 200 random-action episodes: 8
        # contacts and 34 rows at most. The contact buffer is shared by all envs, so one env may use more than 16.
        # 96 rows keep 19 above the bound (H200, 16384 envs: 2.21M env-steps/s against 2.13M at 128 and 2.24M at 80).
        physics=mdp.PhysicsOptions(contacts_per_env=16, constraints_per_env=96))
