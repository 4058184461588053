"""Isaac-Velocity-Flat-Unitree-Go1-v0's config (Isaac Lab's UnitreeGo1FlatEnvCfg), from
../shared/reference/go1-velocity.md. Rewards are multiplied by the policy dt, as Isaac Lab does."""

from __future__ import annotations

import dataclasses
import os

XML = os.path.join(os.path.dirname(__file__), "go1.xml")


@dataclasses.dataclass(frozen=True)
class Go1FlatCfg:
    xml_path: str = XML
    sim_dt: float = 0.005
    decimation: int = 4  # 50 Hz policy
    episode_length_s: float = 20.0
    action_scale: float = 0.25  # joint target = default + 0.25 x action (the default pose is in the MJCF's PD)
    num_actions: int = 12
    num_observations: int = 48
    reward_scale_by_dt: bool = True
    reward_weights: dict = dataclasses.field(default_factory=lambda: {
        "track_lin_vel_xy_exp": 1.5, "track_ang_vel_z_exp": 0.75, "lin_vel_z_l2": -2.0, "ang_vel_xy_l2": -0.05,
        "dof_torques_l2": -2.0e-4, "dof_acc_l2": -2.5e-7, "action_rate_l2": -0.01, "feet_air_time": 0.25,
        "flat_orientation_l2": -2.5,
    })
    # commands: base x/y velocity (m/s) and yaw rate (rad/s), resampled every 10 s; 2% of envs stand still
    lin_vel_x_range: tuple = (-1.0, 1.0)
    lin_vel_y_range: tuple = (-1.0, 1.0)
    ang_vel_z_range: tuple = (-1.0, 1.0)
    command_resample_s: float = 10.0
    standing_fraction: float = 0.02
    tracking_std_sq: float = 0.25  # the exp kernels' 0.25
    feet: tuple = ("FR_calf", "FL_calf", "RR_calf", "RL_calf")  # the bodies that hold the foot spheres
    base: str = "trunk"
    contact_threshold_n: float = 1.0  # Isaac Lab's contact sensor threshold
    air_time_threshold_s: float = 0.5
    air_time_min_command: float = 0.1  # no air-time reward when |cmd_xy| is below this
    default_joint_pos: tuple = (0.0, 0.8, -1.5, 0.0, 0.8, -1.5, 0.0, 1.0, -1.5, 0.0, 1.0, -1.5)  # FR FL RR RL
    base_height: float = 0.4
    # observation noise (uniform, +-): base lin vel, base ang vel, projected gravity, joint pos, joint vel
    noise: bool = True
    noise_lin_vel: float = 0.1
    noise_ang_vel: float = 0.2
    noise_gravity: float = 0.05
    noise_joint_pos: float = 0.01
    noise_joint_vel: float = 1.5
    # events: reset pose, per-env trunk mass and feet friction
    reset_xy_range: tuple = (-0.5, 0.5)
    reset_yaw_range: tuple = (-3.141592653589793, 3.141592653589793)
    randomize: bool = True
    trunk_mass_add_range: tuple = (-1.0, 3.0)
    friction_range: tuple = (0.8, 0.8)  # Isaac Lab's flat Go1 fixes static friction at 0.8 (MuJoCo has one)


def play_cfg(**overrides) -> Go1FlatCfg:
    """Isaac Lab's _PLAY variant: no observation noise, no randomization."""
    return Go1FlatCfg(**{"noise": False, "randomize": False, **overrides})
