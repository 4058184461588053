"""The swing-up task's config: a manager-based task of fleetlab's term library (fleetlab.mdp) and of this
package's own terms (mdp.py). The hinge's qpos is its angle from upright (rad); the bob starts hanging down."""

from __future__ import annotations

import math
import os

from fleetlab import mdp
from fleetlab_pendulum import mdp as swing

XML = os.path.join(os.path.dirname(__file__), "pendulum.xml")


def pendulum_swing_up() -> mdp.ManagerBasedRLEnvCfg:
    return mdp.ManagerBasedRLEnvCfg(
        scene=mdp.SceneCfg(xml_path=XML, sim_dt=0.01, decimation=2,  # 50 Hz policy
                       default_joint_pos={"hinge": math.pi}),  # hanging down
        episode_length_s=5.0,  # 250 policy steps
        # ctrl in [-1, 1], the motor's gear makes it +-2 N m: too weak to lift the bob directly
        actions={"torque": mdp.JointEffortAction(scale=1.0)},
        observations={"policy": mdp.ObsGroup(terms={
            "angle": mdp.ObsTerm(func=swing.angle_cos_sin),
            "speed": mdp.ObsTerm(func=mdp.joint_vel_rel, scale=1 / 8),
        })},
        events={"reset_hinge": mdp.EventTerm(func=mdp.reset_joints_by_offset, mode="reset",
                                         params={"position_range": (-0.3, 0.3), "velocity_range": (-0.5, 0.5)})},
        rewards={  # Isaac Lab's convention: x the policy dt, so the return does not depend on the policy rate
            "upright": mdp.RewTerm(func=swing.upright, weight=1.0),  # +1 upright, -1 hanging
            "spin": mdp.RewTerm(func=mdp.joint_vel_l2, weight=-0.01),
            "effort": mdp.RewTerm(func=mdp.action_l2, weight=-0.01),
        },
        terminations={
            "time_out": mdp.DoneTerm(func=mdp.time_out, time_out=True),
            "too_fast": mdp.DoneTerm(func=swing.spinning_faster_than, params={"max_speed": 20.0}),  # a diverging policy
        },
        metrics={"upright": mdp.MetricTerm(func=swing.within_upright, params={"tolerance": 0.2},
                                       description="|angle| < 0.2 rad")},
        success="upright",
    )
