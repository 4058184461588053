"""What every term function receives: `func(env, **params)` with `env` a TermEnv of ONE env.

When the terms run in a policy step (envs/core.py):

    1. the action terms turn the policy's action into ctrl; MJX takes `decimation` physics steps
    2. the sensors update (contact forces of the last physics step, air times)
    3. termination terms, then reward terms (they see `env.terminated`), then metric terms
    4. commands count down, resample where their time is up, and update (heading control)
    5. interval events, then the observation terms (they see this step's action as `env.action`)
    6. an env whose episode ended is reset: reset events on the default state, commands sampled, observations of
       the new state (`env.action` zeros there); curriculum terms run for it first, on the ended episode's data

Frames: `data` is MuJoCo's (MJX) Data after the last physics step: qpos/qvel as MuJoCo orders them (a free root:
qpos[0:3] world position, qpos[3:7] quaternion w,x,y,z, qvel[0:3] world linear velocity, qvel[3:6] angular
velocity in the root's own frame); kinematics (xpos, xquat, site_xpos, ...) in the world frame; cfrc_ext/cfrc_int
(contact and incoming wrenches, [torque, force]) only when a term reads them (then MuJoCo's post-constraint pass
runs once per policy step). At a reset, `data` holds the reset state with kinematics only when an observation term
reads them; its contact forces are zero. Units are SI: m, rad, s, N, kg.
"""

from __future__ import annotations

import dataclasses

import jax

from fleetlab.envs.scene import Scene


@dataclasses.dataclass(frozen=True)
class TermEnv:
    scene: Scene  # the model's names, ids and defaults (numpy; static), `scene.dt` the policy step (s)
    data: object  # mjx.Data after the physics step (see above)
    model: object  # the mjx.Model this env steps with (per-env fields that events randomized)
    action: jax.Array  # this step's policy action, before scaling (zeros at a reset)
    prev_action: jax.Array  # the step before's (zeros in an episode's first step)
    prev_qpos: jax.Array  # qpos and qvel before this policy step
    prev_qvel: jax.Array
    episode_length: jax.Array  # policy steps taken in this episode, this one included (0 at a reset)
    max_episode_length: int
    commands: dict  # command name -> its state dict ("command": the vector terms read)
    sensors: dict  # sensor name -> its readings dict (contact sensor: force, contact, first_contact, air_time, ...)
    curriculum: dict  # curriculum term name -> this env's value
    terminated: jax.Array  # whether a failure term fired at this step (False for terminations themselves)
    key: jax.Array  # a random key of this term alone (events, commands, curriculum)
    # where this env's episode started from: its terrain tile's origin (world frame, m; zeros without a terrain)
    env_origin: jax.Array | None = None

    def replace(self, **changes) -> "TermEnv":
        return dataclasses.replace(self, **changes)

    def command(self, name: str) -> jax.Array:
        return self.commands[name]["command"]


__all__ = ["TermEnv"]
