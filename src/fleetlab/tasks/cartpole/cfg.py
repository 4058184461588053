"""Cartpole configs, following Isaac Lab's Isaac-Cartpole-v0 (manager-based) and Isaac-Cartpole-Direct-v0. Joint
slider_to_cart moves the cart (m), cart_to_pole is the pole's hinge (rad, 0 upright)."""

from __future__ import annotations

import math
import os

from fleetlab import mdp

XML = os.path.join(os.path.dirname(__file__), "cartpole.xml")
CART, POLE = mdp.Joints("slider_to_cart"), mdp.Joints("cart_to_pole")


def cartpole() -> mdp.ManagerBasedRLEnvCfg:
    """Isaac-Cartpole-v0: obs (cart pos, pole pos, cart vel, pole vel); rewards scaled by the policy dt."""
    return mdp.ManagerBasedRLEnvCfg(
        scene=mdp.SceneCfg(xml_path=XML, sim_dt=1 / 120, decimation=2),  # 60 Hz policy
        episode_length_s=5.0,  # 300 policy steps
        actions={"joint_effort": mdp.JointEffortAction(joints=CART, scale=100.0)},  # N on the cart
        observations={"policy": mdp.ObsGroup(terms={
            "joint_pos_rel": mdp.ObsTerm(func=mdp.joint_pos_rel),
            "joint_vel_rel": mdp.ObsTerm(func=mdp.joint_vel_rel)})},
        events={"reset_joints": mdp.EventTerm(func=mdp.reset_joints_by_offset_per_joint, mode="reset", params={
            "joints": mdp.Joints("slider_to_cart", "cart_to_pole"),
            "position_range": ((-1.0, 1.0), (-0.25 * math.pi, 0.25 * math.pi)),
            "velocity_range": ((-0.5, 0.5), (-0.25 * math.pi, 0.25 * math.pi))})},
        rewards={
            "alive": mdp.RewTerm(func=mdp.is_alive, weight=1.0),
            "terminating": mdp.RewTerm(func=mdp.is_terminated, weight=-2.0),
            "pole_pos": mdp.RewTerm(func=mdp.joint_pos_target_l2, weight=-1.0, params={"target": 0.0, "joints": POLE}),
            "cart_vel": mdp.RewTerm(func=mdp.joint_vel_l1, weight=-0.01, params={"joints": CART}),
            "pole_vel": mdp.RewTerm(func=mdp.joint_vel_l1, weight=-0.005, params={"joints": POLE}),
        },
        terminations={
            "time_out": mdp.DoneTerm(func=mdp.time_out, time_out=True),
            # Isaac Lab's rail ends at +-4 m; the MJCF has no rail limit (no constraint rows for MJX to solve)
            "cart_out_of_bounds": mdp.DoneTerm(func=mdp.joint_pos_out_of_manual_limit,
                                           params={"joints": CART, "bounds": (-3.0, 3.0)}),
        },
        metrics={"balanced": mdp.MetricTerm(func=mdp.joint_pos_within, params={"limit": 0.2, "joints": POLE},
                                        description="|pole| < 0.2 rad")},
        success="balanced",
    )


def cartpole_direct() -> mdp.ManagerBasedRLEnvCfg:
    """Isaac-Cartpole-Direct-v0: obs (pole pos, pole vel, cart pos, cart vel); rewards not scaled by dt; ends at
    |cart| > 3 m or |pole| > pi/2; a reset sets only the pole angle."""
    cfg = cartpole()
    return cfg.replace(
        reward_scale_by_dt=False,
        observations={"policy": mdp.ObsGroup(terms={
            "pole_pos": mdp.ObsTerm(func=mdp.joint_pos_rel, params={"joints": POLE}),
            "pole_vel": mdp.ObsTerm(func=mdp.joint_vel_rel, params={"joints": POLE}),
            "cart_pos": mdp.ObsTerm(func=mdp.joint_pos_rel, params={"joints": CART}),
            "cart_vel": mdp.ObsTerm(func=mdp.joint_vel_rel, params={"joints": CART})})},
        events={"reset_joints": mdp.EventTerm(func=mdp.reset_joints_by_offset_per_joint, mode="reset", params={
            "joints": mdp.Joints("slider_to_cart", "cart_to_pole"),
            "position_range": ((0.0, 0.0), (-0.25 * math.pi, 0.25 * math.pi)),
            "velocity_range": ((0.0, 0.0), (0.0, 0.0))})},
        terminations={**cfg.terminations,
                      "pole_out_of_bounds": mdp.DoneTerm(func=mdp.joint_pos_out_of_manual_limit,
                                                     params={"joints": POLE, "bounds": (-math.pi / 2, math.pi / 2)})},
    )
