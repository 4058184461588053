"""Command terms (Isaac Lab's isaaclab.envs.mdp.commands): configs that are also the code (envs.cfg.CommandTerm)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import CommandTerm
from fleetlab.mdp.math import uniform, wrap_to_pi, yaw_roll


@dataclasses.dataclass(frozen=True)
class VelocityRanges:
    lin_vel_x: tuple = (-1.0, 1.0)  # m/s, root frame
    lin_vel_y: tuple = (-1.0, 1.0)
    ang_vel_z: tuple = (-1.0, 1.0)  # rad/s
    heading: tuple = (-3.141592653589793, 3.141592653589793)  # rad, world yaw


@dataclasses.dataclass(frozen=True)
class UniformVelocityCommandCfg(CommandTerm):
    """Isaac Lab's UniformVelocityCommand: (vx, vy, yaw rate) uniform in the ranges, zero for a fraction
    rel_standing_envs of the draws. With heading_command, a fraction rel_heading_envs of the draws get a
    heading instead, and their yaw rate becomes stiffness x (heading - yaw), clipped to ang_vel_z, every step."""

    ranges: VelocityRanges = dataclasses.field(default_factory=VelocityRanges)
    rel_standing_envs: float = 0.0
    heading_command: bool = False
    rel_heading_envs: float = 1.0
    heading_control_stiffness: float = 0.5

    def sample(self, env) -> dict:
        k = jax.random.split(env.key, 6)
        u = lambda key, lo_hi: uniform(key, (), lo_hi[0], lo_hi[1])  # noqa: E731
        r = self.ranges
        heading = self.heading_command  # without heading control, its draws are constants: no random bits
        return {
            "command": jnp.stack([u(k[0], r.lin_vel_x), u(k[1], r.lin_vel_y), u(k[2], r.ang_vel_z)]),
            "heading": u(k[3], r.heading) if heading else jnp.zeros((), jnp.float32),
            "is_heading": jax.random.uniform(k[4]) < self.rel_heading_envs if heading else jnp.zeros((), bool),
            "is_standing": jax.random.uniform(k[5]) < self.rel_standing_envs,
        }

    def update(self, env, state: dict) -> dict:
        command = state["command"]
        if self.heading_command:
            yaw, _ = yaw_roll(env.data.qpos[3:7])
            turn = jnp.clip(self.heading_control_stiffness * wrap_to_pi(state["heading"] - yaw),
                            self.ranges.ang_vel_z[0], self.ranges.ang_vel_z[1])
            command = command.at[2].set(jnp.where(state["is_heading"], turn, command[2]))
        return {**state, "command": jnp.where(state["is_standing"], 0.0, command)}
