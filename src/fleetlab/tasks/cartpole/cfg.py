"""Cartpole configs, following Isaac Lab's Isaac-Cartpole-v0 (manager-based) and Isaac-Cartpole-Direct-v0."""

from __future__ import annotations

import dataclasses
import math
import os

XML = os.path.join(os.path.dirname(__file__), "cartpole.xml")


@dataclasses.dataclass(frozen=True)
class CartpoleCfg:
    """Isaac-Cartpole-v0: obs (cart pos, pole pos, cart vel, pole vel); rewards scaled by the policy dt."""

    xml_path: str = XML
    sim_dt: float = 1 / 120
    decimation: int = 2  # 60 Hz policy
    episode_length_s: float = 5.0  # 300 policy steps
    action_scale: float = 100.0  # N on the cart
    num_actions: int = 1
    num_observations: int = 4
    reward_weights: dict = dataclasses.field(
        default_factory=lambda: {"alive": 1.0, "terminating": -2.0, "pole_pos": -1.0, "cart_vel": -0.01, "pole_vel": -0.005}
    )
    reward_scale_by_dt: bool = True
    max_cart_pos: float = 3.0
    terminate_on_pole_angle: float | None = None  # the Direct variant ends at |pole| > pi/2
    obs_order: str = "cart_pole"
    cart_pos_range: tuple = (-1.0, 1.0)
    cart_vel_range: tuple = (-0.5, 0.5)
    pole_pos_range: tuple = (-0.25 * math.pi, 0.25 * math.pi)
    pole_vel_range: tuple = (-0.25 * math.pi, 0.25 * math.pi)


@dataclasses.dataclass(frozen=True)
class CartpoleDirectCfg(CartpoleCfg):
    """Isaac-Cartpole-Direct-v0: obs (pole pos, pole vel, cart pos, cart vel); rewards not scaled by dt;
    ends at |cart| > 3 m or |pole| > pi/2; a reset sets only the pole angle."""

    reward_scale_by_dt: bool = False
    terminate_on_pole_angle: float | None = math.pi / 2
    obs_order: str = "pole_cart"
    cart_pos_range: tuple = (0.0, 0.0)
    cart_vel_range: tuple = (0.0, 0.0)
    pole_vel_range: tuple = (0.0, 0.0)
