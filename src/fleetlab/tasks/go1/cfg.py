"""Isaac-Velocity-Flat-Unitree-Go1-v0's config (Isaac Lab's UnitreeGo1FlatEnvCfg) and its play variant, from
../shared/reference/go1-velocity.md. Nothing here is Go1 code: a second legged robot changes the MJCF, the
names and the numbers. Rewards are multiplied by the policy dt, as Isaac Lab does."""

from __future__ import annotations

import math
import os

from fleetlab import mdp

XML = os.path.join(os.path.dirname(__file__), "go1.xml")
COMMAND = {"command_name": "base_velocity"}
FEET = mdp.SensorBodies("contact_forces", ".*_calf")  # the calves hold the foot spheres
BASE = mdp.SensorBodies("contact_forces", "trunk")


def go1_flat() -> mdp.ManagerBasedRLEnvCfg:
    return mdp.ManagerBasedRLEnvCfg(
        scene=mdp.SceneCfg(xml_path=XML, sim_dt=0.005, decimation=4, init_root_pos=(0.0, 0.0, 0.4),  # 50 Hz policy
                       default_joint_pos={".*_hip_joint": 0.0, "F[LR]_thigh_joint": 0.8, "R[LR]_thigh_joint": 1.0,
                                          ".*_calf_joint": -1.5}),
        episode_length_s=20.0,
        # explicit PD (mjlab's gains): Isaac Lab's learned actuator network has no public file
        actions={"joint_pos": mdp.JointPositionAction(scale=0.25, use_default_offset=True, stiffness=35.0,
                                                      damping=0.5)},
        commands={"base_velocity": mdp.UniformVelocityCommandCfg(
            resampling_time_range=(10.0, 10.0), rel_standing_envs=0.02, heading_command=False,
            ranges=mdp.VelocityRanges(lin_vel_x=(-1.0, 1.0), lin_vel_y=(-1.0, 1.0), ang_vel_z=(-1.0, 1.0)))},
        observations={"policy": mdp.ObsGroup(terms={
            "base_lin_vel": mdp.ObsTerm(func=mdp.base_lin_vel, noise=mdp.UniformNoise(-0.1, 0.1)),
            "base_ang_vel": mdp.ObsTerm(func=mdp.base_ang_vel, noise=mdp.UniformNoise(-0.2, 0.2)),
            "projected_gravity": mdp.ObsTerm(func=mdp.projected_gravity, noise=mdp.UniformNoise(-0.05, 0.05)),
            "velocity_commands": mdp.ObsTerm(func=mdp.generated_commands, params=COMMAND),
            "joint_pos": mdp.ObsTerm(func=mdp.joint_pos_rel, noise=mdp.UniformNoise(-0.01, 0.01)),
            "joint_vel": mdp.ObsTerm(func=mdp.joint_vel_rel, noise=mdp.UniformNoise(-1.5, 1.5)),
            "actions": mdp.ObsTerm(func=mdp.last_action),
        })},
        events={
            # Isaac Lab's flat Go1 fixes static friction at 0.8 (MuJoCo has one sliding coefficient)
            "physics_material": mdp.EventTerm(func=mdp.randomize_rigid_body_material, mode="startup",
                                              params={"bodies": mdp.Bodies(".*_calf"),
                                                      "static_friction_range": (0.8, 0.8)}),
            "add_base_mass": mdp.EventTerm(func=mdp.randomize_rigid_body_mass, mode="startup",
                                       params={"bodies": mdp.Bodies("trunk"), "mass_distribution_params": (-1.0, 3.0),
                                               "operation": "add"}),
            "reset_base": mdp.EventTerm(func=mdp.reset_root_state_uniform, mode="reset", params={
                "pose_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "yaw": (-math.pi, math.pi)}, "velocity_range": {}}),
            "reset_robot_joints": mdp.EventTerm(func=mdp.reset_joints_by_scale, mode="reset",
                                            params={"position_range": (1.0, 1.0), "velocity_range": (0.0, 0.0)}),
        },
        rewards={
            "track_lin_vel_xy_exp": mdp.RewTerm(func=mdp.track_lin_vel_xy_exp, weight=1.5,
                                                params={"std": 0.5, **COMMAND}),
            "track_ang_vel_z_exp": mdp.RewTerm(func=mdp.track_ang_vel_z_exp, weight=0.75,
                                               params={"std": 0.5, **COMMAND}),
            "lin_vel_z_l2": mdp.RewTerm(func=mdp.lin_vel_z_l2, weight=-2.0),
            "ang_vel_xy_l2": mdp.RewTerm(func=mdp.ang_vel_xy_l2, weight=-0.05),
            "dof_torques_l2": mdp.RewTerm(func=mdp.joint_torques_l2, weight=-2.0e-4),
            "dof_acc_l2": mdp.RewTerm(func=mdp.joint_acc_l2, weight=-2.5e-7),
            "action_rate_l2": mdp.RewTerm(func=mdp.action_rate_l2, weight=-0.01),
            "feet_air_time": mdp.RewTerm(func=mdp.feet_air_time, weight=0.25,
                                     params={"sensor_cfg": FEET, "threshold": 0.5, **COMMAND}),
            "flat_orientation_l2": mdp.RewTerm(func=mdp.flat_orientation_l2, weight=-2.5),
        },
        terminations={
            "time_out": mdp.DoneTerm(func=mdp.time_out, time_out=True),
            "base_contact": mdp.DoneTerm(func=mdp.illegal_contact, params={"sensor_cfg": BASE, "threshold": 1.0}),
        },
        sensors={"contact_forces": mdp.ContactSensorCfg(bodies=mdp.Bodies("trunk", ".*_calf"), threshold=1.0)},
        metrics={
            "lin_vel_error": mdp.MetricTerm(func=mdp.lin_vel_error, params=COMMAND,
                                            description="|cmd_xy - v_xy| (m/s)"),
            "yaw_rate_error": mdp.MetricTerm(func=mdp.yaw_rate_error, params=COMMAND,
                                         description="|cmd_yaw - w_z| (rad/s)"),
        },
    )


def go1_flat_play() -> mdp.ManagerBasedRLEnvCfg:
    """Isaac Lab's _PLAY variant: no observation noise, no randomization."""
    cfg = go1_flat()
    policy = cfg.observations["policy"]
    return cfg.replace(observations={"policy": mdp.ObsGroup(terms=policy.terms, enable_corruption=False)},
                       events={k: v for k, v in cfg.events.items() if v.mode != "startup"})
