"""Go1 on flat ground, tracking velocity commands: Isaac Lab's locomotion/velocity terms as pure JAX functions of
one env. The root is a free joint (qpos[0:3] position, qpos[3:7] quaternion w,x,y,z; qvel[0:3] world linear
velocity, qvel[3:6] body angular velocity), then the 12 hinges FR, FL, RR, RL x (hip, thigh, calf).

What persists between steps lives in State.extra (Task.extra_reset/extra_step): the command and its timer, the
feet's contact and air times, the previous action and joint velocities, the observation noise key, and the env's
randomized trunk mass and feet friction."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from fleetlab.envs.core import Task
from fleetlab.errors import FleetlabError
from fleetlab.sim.mjx import external_force
from fleetlab.tasks.go1.cfg import Go1FlatCfg, play_cfg
from fleetlab.tasks.locomotion import rotate_inverse

# numpy, not jnp: a JAX array at import would start the XLA backend before jax.distributed.initialize
GRAVITY_DIR = np.asarray([0.0, 0.0, -1.0], np.float32)


@dataclasses.dataclass(frozen=True)
class Go1Consts:
    """What the terms need from the model, read once from the MJCF."""

    qpos0: np.ndarray  # the home pose: base at cfg.base_height, joints at cfg.default_joint_pos
    feet: np.ndarray  # body ids of the bodies holding the feet
    foot_geoms: np.ndarray
    base: int

    @staticmethod
    def from_cfg(cfg: Go1FlatCfg) -> "Go1Consts":
        m = mujoco.MjModel.from_xml_path(cfg.xml_path)
        if m.nu != cfg.num_actions or m.nq != 7 + cfg.num_actions:
            raise FleetlabError(f"{cfg.xml_path}: expected a free base and {cfg.num_actions} actuated hinges")
        qpos0 = m.qpos0.copy()
        qpos0[2] = cfg.base_height
        qpos0[7:] = cfg.default_joint_pos
        feet = np.asarray([m.body(name).id for name in cfg.feet])
        foot_geoms = np.asarray([g for g in range(m.ngeom) if m.geom_bodyid[g] in feet and m.geom_contype[g]])
        return Go1Consts(qpos0=qpos0, feet=feet, foot_geoms=foot_geoms, base=m.body(cfg.base).id)


def _uniform(key, lo_hi, shape=()):
    return jax.random.uniform(key, shape, minval=lo_hi[0], maxval=lo_hi[1])


def sample_command(cfg: Go1FlatCfg, key: jax.Array) -> jax.Array:
    """(vx, vy, yaw rate), uniform in the ranges; zero for the standing fraction of envs."""
    kx, ky, kz, ks = jax.random.split(key, 4)
    command = jnp.stack([_uniform(kx, cfg.lin_vel_x_range), _uniform(ky, cfg.lin_vel_y_range),
                         _uniform(kz, cfg.ang_vel_z_range)])
    return jnp.where(jax.random.uniform(ks) < cfg.standing_fraction, 0.0, command)


def reset(cfg: Go1FlatCfg, key: jax.Array, physics, consts: Go1Consts) -> tuple[jax.Array, jax.Array]:
    """Base at +-0.5 m in x/y with a random yaw, joints at the default pose, at rest (Isaac Lab's reset events)."""
    k_xy, k_yaw = jax.random.split(key)
    yaw = _uniform(k_yaw, cfg.reset_yaw_range)
    qpos = jnp.asarray(consts.qpos0, jnp.float32)
    qpos = qpos.at[0:2].add(_uniform(k_xy, cfg.reset_xy_range, (2,)))
    qpos = qpos.at[3:7].set(jnp.stack([jnp.cos(yaw / 2), 0.0, 0.0, jnp.sin(yaw / 2)]))
    return qpos, jnp.zeros(physics.mj_model.nv, jnp.float32)


def extra_reset(cfg: Go1FlatCfg, key: jax.Array, physics, consts: Go1Consts) -> dict:
    k_cmd, k_mass, k_friction, k_obs = jax.random.split(key, 4)
    n, feet = cfg.num_actions, len(cfg.feet)
    zeros_feet = jnp.zeros(feet, jnp.float32)
    return {
        "command": sample_command(cfg, k_cmd),
        "command_time": jnp.asarray(cfg.command_resample_s, jnp.float32),
        "contact": zeros_feet, "first_contact": zeros_feet, "air_time": zeros_feet, "last_air_time": zeros_feet,
        "action": jnp.zeros(n, jnp.float32), "prev_action": jnp.zeros(n, jnp.float32),
        "prev_qvel": jnp.zeros(physics.mj_model.nv, jnp.float32),
        "obs_key": k_obs,
        "trunk_mass_add": _uniform(k_mass, cfg.trunk_mass_add_range) if cfg.randomize else jnp.zeros(()),
        "friction": (_uniform(k_friction, cfg.friction_range) if cfg.randomize
                     else jnp.asarray(cfg.friction_range[0], jnp.float32)),
    }


def extra_step(cfg: Go1FlatCfg, prev, data, action: jax.Array, key: jax.Array, consts: Go1Consts, dt: float) -> dict:
    """After the physics step: feet contact from the contact forces the world applies to the feet (the constraint
    solution of this step), their air times as Isaac Lab's contact sensor keeps them, and the command timer."""
    e = prev.extra
    k_cmd, k_obs = jax.random.split(key)
    contact = jnp.linalg.norm(external_force(data, consts.feet), axis=-1) > cfg.contact_threshold_n
    in_air_before = e["air_time"] > 0
    first_contact = contact & in_air_before
    last_air_time = jnp.where(first_contact, e["air_time"], e["last_air_time"])
    air_time = jnp.where(contact, 0.0, e["air_time"] + dt)
    command_time = e["command_time"] - dt
    resample = command_time <= 0
    return {
        **e,
        "command": jnp.where(resample, sample_command(cfg, k_cmd), e["command"]),
        "command_time": jnp.where(resample, cfg.command_resample_s, command_time),
        "contact": contact.astype(jnp.float32), "first_contact": first_contact.astype(jnp.float32),
        "air_time": air_time, "last_air_time": last_air_time,
        "action": action, "prev_action": e["action"], "prev_qvel": prev.qvel, "obs_key": k_obs,
    }


def model_of(model, extra: dict, consts: Go1Consts):
    """This env's model: trunk mass + U(-1, 3) kg (inertia scaled with it) and the feet's friction. MuJoCo takes the
    larger friction of two geoms in contact; the floor's is lower, so the feet's is the contact's."""
    base = consts.base
    mass = model.body_mass[base]
    scale = (mass + extra["trunk_mass_add"]) / mass
    return model.replace(
        body_mass=model.body_mass.at[base].multiply(scale),
        body_inertia=model.body_inertia.at[base].multiply(scale),
        geom_friction=model.geom_friction.at[consts.foot_geoms, 0].set(extra["friction"]),
    )


def _base_velocities(data) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Base linear and angular velocity in the base frame, and gravity's direction in the base frame."""
    quat = data.qpos[3:7]
    return rotate_inverse(quat, data.qvel[0:3]), data.qvel[3:6], rotate_inverse(quat, GRAVITY_DIR)


def observe(cfg: Go1FlatCfg, data, last_action: jax.Array, extra: dict, consts: Go1Consts) -> jax.Array:
    """Isaac Lab's 48: base lin vel, base ang vel, projected gravity, command, joint pos - default, joint vel,
    last action; uniform noise on the first six in training."""
    lin_vel, ang_vel, gravity = _base_velocities(data)
    parts = [lin_vel, ang_vel, gravity, extra["command"], data.qpos[7:] - consts.qpos0[7:], data.qvel[6:]]
    if cfg.noise:
        scales = (cfg.noise_lin_vel, cfg.noise_ang_vel, cfg.noise_gravity, 0.0, cfg.noise_joint_pos,
                  cfg.noise_joint_vel)
        keys = jax.random.split(extra["obs_key"], len(parts))
        parts = [p + s * jax.random.uniform(k, p.shape, minval=-1.0, maxval=1.0) for p, s, k in zip(parts, scales, keys)]
    return jnp.concatenate([*parts, last_action])


def terminated(cfg: Go1FlatCfg, data, extra: dict, consts: Go1Consts) -> jax.Array:
    """base_contact: the trunk touches the ground (contact force above the threshold)."""
    return jnp.linalg.norm(external_force(data, consts.base)) > cfg.contact_threshold_n


def reward_terms(cfg: Go1FlatCfg, data, action: jax.Array, is_terminated: jax.Array, prev_qpos: jax.Array,
                 extra: dict, consts: Go1Consts, dt: float) -> dict[str, jax.Array]:
    """Isaac Lab's nine flat-ground terms, unweighted (the core multiplies by weight x dt)."""
    lin_vel, ang_vel, gravity = _base_velocities(data)
    command = extra["command"]
    moving = jnp.linalg.norm(command[:2]) > cfg.air_time_min_command
    air = jnp.sum((extra["last_air_time"] - cfg.air_time_threshold_s) * extra["first_contact"])
    return {
        "track_lin_vel_xy_exp": jnp.exp(-jnp.sum((command[:2] - lin_vel[:2]) ** 2) / cfg.tracking_std_sq),
        "track_ang_vel_z_exp": jnp.exp(-((command[2] - ang_vel[2]) ** 2) / cfg.tracking_std_sq),
        "lin_vel_z_l2": lin_vel[2] ** 2,
        "ang_vel_xy_l2": jnp.sum(ang_vel[:2] ** 2),
        "dof_torques_l2": jnp.sum(data.actuator_force**2),
        "dof_acc_l2": jnp.sum(((data.qvel[6:] - extra["prev_qvel"][6:]) / dt) ** 2),
        "action_rate_l2": jnp.sum((extra["action"] - extra["prev_action"]) ** 2),
        "feet_air_time": jnp.where(moving, air, 0.0),
        "flat_orientation_l2": jnp.sum(gravity[:2] ** 2),
    }


def tracking_errors(cfg: Go1FlatCfg, state) -> dict[str, jax.Array]:
    """What play reports per env and step: |cmd_xy - v_xy| (m/s, base frame) and |cmd_yaw - w_z| (rad/s)."""
    quat = state.qpos[3:7]
    lin_vel = rotate_inverse(quat, state.qvel[0:3])
    command = state.extra["command"]
    return {"lin_vel_error": jnp.linalg.norm(command[:2] - lin_vel[:2]),
            "yaw_rate_error": jnp.abs(command[2] - state.qvel[5])}


def make_task(cfg: Go1FlatCfg) -> Task:
    consts = Go1Consts.from_cfg(cfg)
    dt = cfg.sim_dt * cfg.decimation
    return Task(
        cfg=cfg,
        reset=functools.partial(reset, consts=consts),
        observe=functools.partial(observe, consts=consts),
        reward_terms=functools.partial(reward_terms, consts=consts, dt=dt),
        terminated=functools.partial(terminated, consts=consts),
        observe_needs_body_forces=True,  # the feet contacts and the trunk contact come from cfrc_ext
        extra_reset=functools.partial(extra_reset, consts=consts),
        extra_step=functools.partial(extra_step, consts=consts, dt=dt),
        model_of=functools.partial(model_of, consts=consts) if cfg.randomize else None,
        termination_name="base_contact",
        play_metrics=tracking_errors,
    )


def make_train_task(**overrides) -> Task:
    return make_task(Go1FlatCfg(**overrides))


def make_play_task(**overrides) -> Task:
    return make_task(play_cfg(**overrides))
