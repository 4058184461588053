"""The config Ant and Humanoid share, as Isaac Lab's classic tasks share `humanoid/mdp`: Isaac Lab's classic
locomotion env (sim 1/120 s x 2, 16 s episodes, rewards x dt; walk to a far target at +x), with the robot's
MJCF, weights and scales as arguments. The robot's root is a free joint, then its actuated hinges, one motor each,
in joint order (ctrl in [-1, 1]; the motors' gears are the per-joint effort scales)."""

from __future__ import annotations

from fleetlab import mdp

TARGET = (1000.0, 0.0, 0.0)


def classic_locomotion(xml_path: str, *, feet: tuple, weights: dict, termination_height: float,
                       joint_limit_threshold: float, default_joint_pos: dict | None = None,
                       ang_vel_scale: float = 1.0, joint_vel_scale: float = 0.1, feet_force_scale: float = 0.01,
                       upright_threshold: float = 0.93, heading_threshold: float = 0.8,
                       physics: mdp.PhysicsOptions = mdp.PhysicsOptions()) -> mdp.ManagerBasedRLEnvCfg:
    target = {"target_pos": TARGET}
    return mdp.ManagerBasedRLEnvCfg(
        scene=mdp.SceneCfg(xml_path=xml_path, sim_dt=1 / 120, decimation=2, default_joint_pos=default_joint_pos or {}),
        physics=physics,
        episode_length_s=16.0,
        actions={"joint_effort": mdp.JointEffortAction(scale=1.0)},
        observations={"policy": mdp.ObsGroup(terms={  # Isaac Lab's classic policy observation, in its order
            "base_height": mdp.ObsTerm(func=mdp.base_pos_z),
            "base_lin_vel": mdp.ObsTerm(func=mdp.base_lin_vel),
            "base_ang_vel": mdp.ObsTerm(func=mdp.base_ang_vel, scale=ang_vel_scale),
            # Isaac Lab's base_yaw_roll, base_angle_to_target, base_up_proj, base_heading_proj
            "base_orientation": mdp.ObsTerm(func=mdp.base_orientation_to_target, params=target),
            "joint_pos_norm": mdp.ObsTerm(func=mdp.joint_pos_limit_normalized),
            "joint_vel_rel": mdp.ObsTerm(func=mdp.joint_vel_rel, scale=joint_vel_scale),
            "feet_body_forces": mdp.ObsTerm(func=mdp.body_incoming_wrench, params={"bodies": mdp.Bodies(*feet)},
                                        scale=feet_force_scale),
            "actions": mdp.ObsTerm(func=mdp.last_action),
        })},
        events={"reset_joints": mdp.EventTerm(func=mdp.reset_joints_by_offset, mode="reset",
                                          params={"position_range": (-0.2, 0.2), "velocity_range": (-0.1, 0.1)})},
        rewards={
            "progress": mdp.RewTerm(func=mdp.progress_reward, weight=weights["progress"], params=target),
            "alive": mdp.RewTerm(func=mdp.is_alive, weight=weights["alive"]),
            "upright": mdp.RewTerm(func=mdp.upright_posture_bonus, weight=weights["upright"],
                               params={"threshold": upright_threshold}),
            "move_to_target": mdp.RewTerm(func=mdp.move_to_target_bonus, weight=weights["move_to_target"],
                                      params={"threshold": heading_threshold, **target}),
            "action_l2": mdp.RewTerm(func=mdp.action_l2, weight=weights["action_l2"]),
            "energy": mdp.RewTerm(func=mdp.power_consumption, weight=weights["energy"]),
            "joint_pos_limits": mdp.RewTerm(func=mdp.joint_pos_limits_penalty_ratio, weight=weights["joint_pos_limits"],
                                        params={"threshold": joint_limit_threshold}),
        },
        terminations={
            "time_out": mdp.DoneTerm(func=mdp.time_out, time_out=True),
            "torso_height": mdp.DoneTerm(func=mdp.root_height_below_minimum,
                                     params={"minimum_height": termination_height}),
        },
        metrics={"standing": mdp.MetricTerm(func=mdp.root_height_above, params={"minimum_height": termination_height},
                                        description="torso above the termination height")},
        success="standing",
    )
