"""The term library (fleetlab.mdp), one term at a time against a value computed by hand: each term gets the
TermEnv of a state set by hand (Env.term_env), as the managers would give it."""

import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from fleetlab import mdp
from fleetlab.envs import make

YAW = 0.3


@pytest.fixture(scope="module")
def go1():
    return make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=1, seed=0, impl="jax").core


@pytest.fixture(scope="module")
def ant():
    return make("Isaac-Ant-v0", num_envs=1, seed=0, impl="jax").core


@pytest.fixture(scope="module")
def cartpole():
    return make("Isaac-Cartpole-v0", num_envs=1, seed=0, impl="jax").core


def _sel(core, entity):
    return core.scene.select(entity, "test")


def go1_state(core, yaw=YAW):
    """Yawed by 0.3 rad, joints 0.1 rad off the default, moving 0.5 m/s forward (base frame) and 0.2 m/s up."""
    q = core.scene.default_qpos.copy()
    q[3:7] = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
    q[7:] += 0.1
    v = np.zeros(18)
    v[0:3] = [0.5 * math.cos(yaw), 0.5 * math.sin(yaw), 0.2]
    v[3:6] = [0.1, -0.2, 0.4]
    v[6:] = 0.5
    return q, v


def f(x) -> np.ndarray:
    return np.asarray(x, np.float64)


def test_root_observations(go1):
    q, v = go1_state(go1)
    env = go1.term_env(q, v)
    assert f(mdp.base_pos_z(env)) == pytest.approx([0.4])
    assert f(mdp.base_lin_vel(env)) == pytest.approx([0.5, 0.0, 0.2], abs=1e-6)
    assert f(mdp.base_ang_vel(env)) == pytest.approx([0.1, -0.2, 0.4])
    assert f(mdp.projected_gravity(env)) == pytest.approx([0, 0, -1], abs=1e-6), "a yaw keeps the base level"
    assert f(mdp.base_yaw_roll(env)) == pytest.approx([YAW, 0.0], abs=1e-6)
    assert f(mdp.base_up_proj(env)) == pytest.approx([1.0], abs=1e-6)
    target = (10.0, 10.0 * math.tan(0.5), 0.0)  # from the origin's neighbourhood: 0.5 rad to the left
    to_target = np.asarray(target[:2]) - q[:2]
    bearing = math.atan2(to_target[1], to_target[0])
    assert f(mdp.base_angle_to_target(env, target)) == pytest.approx([bearing - YAW], abs=1e-5)
    assert f(mdp.base_heading_proj(env, target)) == pytest.approx([math.cos(bearing - YAW)], abs=1e-5)
    assert f(mdp.base_orientation_to_target(env, target)) == pytest.approx(
        [YAW, 0.0, bearing - YAW, 1.0, math.cos(bearing - YAW)], abs=1e-5), "the four above, in one term"
    commanded = env.replace(commands={"base_velocity": {"command": jnp.asarray([0.3, -0.2, 0.1])}})
    assert f(mdp.generated_commands(commanded, command_name="base_velocity")) == pytest.approx([0.3, -0.2, 0.1])
    rolled = q.copy()
    rolled[3:7] = [math.cos(0.1), math.sin(0.1), 0, 0]  # 0.2 rad about x: gravity's y in the base frame is -sin(0.2)
    env = go1.term_env(rolled, v)
    assert f(mdp.projected_gravity(env)) == pytest.approx([0, -math.sin(0.2), -math.cos(0.2)], abs=1e-6)
    assert f(mdp.base_yaw_roll(env)) == pytest.approx([0.0, 0.2], abs=1e-6)
    assert f(mdp.base_up_proj(env)) == pytest.approx([math.cos(0.2)], abs=1e-6)


def test_joint_observations(go1, ant):
    q, v = go1_state(go1)
    env = go1.term_env(q, v, action=jnp.arange(12.0))
    assert f(mdp.joint_pos_rel(env, joints=_sel(go1, mdp.Joints()))) == pytest.approx(np.full(12, 0.1), abs=1e-6)
    calves = _sel(go1, mdp.Joints(".*_calf_joint"))
    assert f(mdp.joint_pos_rel(env, joints=calves)) == pytest.approx(np.full(4, 0.1), abs=1e-6)
    assert f(mdp.joint_vel_rel(env, joints=calves)) == pytest.approx(np.full(4, 0.5))
    assert f(mdp.last_action(env)) == pytest.approx(np.arange(12.0))
    joints = _sel(ant, mdp.Joints())
    lower, upper = ant.scene.mj_model.jnt_range[joints.ids].T
    qa = ant.scene.default_qpos.copy()
    qa[7:] = lower + 0.25 * (upper - lower)  # a quarter of the range: -0.5 normalized
    env = ant.term_env(qa, np.zeros(14))
    assert f(mdp.joint_pos_limit_normalized(env, joints=joints)) == pytest.approx(np.full(8, -0.5), abs=1e-5)


def test_body_incoming_wrench_is_mujocos_cfrc_int(ant):
    """After a step of the Ant pressed into the floor, the feet's wrench is MuJoCo C's mj_rnePostConstraint."""
    env = make("Isaac-Ant-v0", num_envs=1, seed=0, impl="jax")
    for _ in range(20):
        env.step_jax(jnp.zeros((1, 8)))
    m = env.core.physics.mj_model
    data = mujoco.MjData(m)
    data.qpos[:], data.qvel[:] = np.asarray(env.state.qpos[0]), np.asarray(env.state.qvel[0])
    core = env.core
    stepped = core.physics.body_forces(core.physics.advance(core.physics.data(env.state.qpos[0], env.state.qvel[0]),
                                                            jnp.zeros(8)))
    term_env = core.term_env(env.state.qpos[0], env.state.qvel[0]).replace(data=stepped)
    feet = _sel(core, mdp.Bodies("front_left_foot", "right_back_foot"))
    mujoco.mj_step(m, data, nstep=2)  # the same two substeps in MuJoCo C
    mujoco.mj_rnePostConstraint(m, data)
    expected = data.cfrc_int[feet.ids].reshape(-1)
    assert np.abs(expected).max() > 1.0, "the feet carry the robot"
    assert f(mdp.body_incoming_wrench(term_env, bodies=feet)) == pytest.approx(expected, rel=2e-2, abs=0.05)


def test_velocity_tracking_rewards(go1):
    q, v = go1_state(go1)
    commands = {"base_velocity": {"command": jnp.asarray([0.8, 0.1, 0.5])}}
    torques = np.linspace(-2, 2, 12)
    env = go1.term_env(q, v, action=jnp.full(12, 0.3), prev_action=jnp.full(12, 0.1), prev_qvel=jnp.zeros(18),
                       commands=commands)
    env = env.replace(data=env.data.replace(actuator_force=jnp.asarray(torques, jnp.float32)))
    c = {"command_name": "base_velocity"}
    assert float(mdp.track_lin_vel_xy_exp(env, std=0.5, **c)) == pytest.approx(math.exp(-(0.3**2 + 0.1**2) / 0.25),
                                                                               rel=1e-4)
    assert float(mdp.track_ang_vel_z_exp(env, std=0.5, **c)) == pytest.approx(math.exp(-(0.1**2) / 0.25), rel=1e-4)
    assert float(mdp.lin_vel_z_l2(env)) == pytest.approx(0.04, rel=1e-4)
    assert float(mdp.ang_vel_xy_l2(env)) == pytest.approx(0.05, rel=1e-4)
    assert float(mdp.joint_torques_l2(env)) == pytest.approx(float(np.sum(torques**2)), rel=1e-4)
    joints = _sel(go1, mdp.Joints())
    assert float(mdp.joint_acc_l2(env, joints=joints)) == pytest.approx(12 * (0.5 / 0.02) ** 2, rel=1e-4)
    assert float(mdp.action_rate_l2(env)) == pytest.approx(12 * 0.04, rel=1e-4)
    assert float(mdp.action_l2(env)) == pytest.approx(12 * 0.09, rel=1e-4)
    assert float(mdp.flat_orientation_l2(env)) == pytest.approx(0.0, abs=1e-10), "yaw alone keeps the base flat"
    assert float(mdp.lin_vel_error(env, **c)) == pytest.approx(math.hypot(0.3, 0.1), rel=1e-4)
    assert float(mdp.yaw_rate_error(env, **c)) == pytest.approx(0.1, rel=1e-4)


def test_feet_air_time(go1):
    q, v = go1_state(go1)
    feet = _sel(go1, mdp.SensorBodies("contact_forces", ".*_calf"))
    reading = {"first_contact": jnp.asarray([False, True, True, False, False]),  # trunk, FR, FL, RR, RL
               "last_air_time": jnp.asarray([0.0, 0.7, 0.2, 0.9, 0.0])}
    env = go1.term_env(q, v, sensors={"contact_forces": reading},
                       commands={"base_velocity": {"command": jnp.asarray([0.8, 0.1, 0.5])}})
    args = {"command_name": "base_velocity", "sensor_cfg": feet, "threshold": 0.5}
    assert float(mdp.feet_air_time(env, **args)) == pytest.approx((0.7 - 0.5) + (0.2 - 0.5), rel=1e-4)
    slow = env.replace(commands={"base_velocity": {"command": jnp.asarray([0.05, 0.0, 0.5])}})
    assert float(mdp.feet_air_time(slow, **args)) == 0.0, "|cmd_xy| < 0.1: no air-time reward"


def test_classic_locomotion_rewards(ant):
    q = ant.scene.default_qpos.copy()
    prev = q.copy()
    q[0] += 0.01  # 1 cm towards the target at +x in one 1/60 s step
    env = ant.term_env(q, np.zeros(14), prev_qpos=jnp.asarray(prev, jnp.float32),
                       action=jnp.full(8, 0.5)).replace(terminated=jnp.asarray(False))
    assert float(mdp.progress_reward(env)) == pytest.approx(0.01 * 60, rel=1e-2)
    assert float(mdp.is_alive(env)) == 1.0 and float(mdp.is_terminated(env)) == 0.0
    assert float(mdp.is_alive(env.replace(terminated=jnp.asarray(True)))) == 0.0
    assert float(mdp.upright_posture_bonus(env, threshold=0.93)) == 1.0
    assert float(mdp.move_to_target_bonus(env, threshold=0.8)) == 1.0
    turned = q.copy()
    turned[3:7] = [math.cos(0.5), 0, 0, math.sin(0.5)]  # yawed 1 rad: heading cos(1) = 0.54 < 0.8
    env_turned = ant.term_env(turned, np.zeros(14))
    assert float(mdp.move_to_target_bonus(env_turned, threshold=0.8)) == pytest.approx(math.cos(1.0) / 0.8, rel=1e-4)
    v = np.zeros(14)
    v[6:] = np.linspace(-1, 1, 8)
    env_moving = ant.term_env(q, v, action=jnp.full(8, 0.5))
    gear = ant.scene.mj_model.actuator_gear[:, 0]
    joints = _sel(ant, mdp.Joints())
    assert float(mdp.power_consumption(env_moving, joints=joints)) == pytest.approx(
        float(np.sum(np.abs(0.5 * v[6:] * gear / gear.max()))), rel=1e-5)
    lower, upper = ant.scene.mj_model.jnt_range[joints.ids].T
    near = q.copy()
    near[7:] = upper - 0.001 * (upper - lower)  # normalized 0.998: past 0.99 by 0.008 of the remaining 0.01
    env_near = ant.term_env(near, np.zeros(14))
    ratio = mdp.joint_pos_limits_penalty_ratio(env_near, threshold=0.99, joints=joints)
    assert float(ratio) == pytest.approx(float(np.sum(gear / gear.max() * 0.8)), rel=1e-3)


def test_joint_rewards_and_terminations(cartpole):
    cart, pole = _sel(cartpole, mdp.Joints("slider_to_cart")), _sel(cartpole, mdp.Joints("cart_to_pole"))
    env = cartpole.term_env([0.5, 0.3], [0.2, -0.4])
    assert float(mdp.joint_pos_target_l2(env, target=0.1, joints=pole)) == pytest.approx(0.04, rel=1e-5)
    assert float(mdp.joint_vel_l1(env, joints=pole)) == pytest.approx(0.4, rel=1e-6)
    assert float(mdp.joint_vel_l2(env, joints=pole)) == pytest.approx(0.16, rel=1e-5)
    assert not bool(mdp.joint_pos_out_of_manual_limit(env, bounds=(-3.0, 3.0), joints=cart))
    assert bool(mdp.joint_pos_out_of_manual_limit(env, bounds=(-0.4, 0.4), joints=cart))
    assert bool(mdp.joint_pos_within(env, limit=0.31, joints=pole))
    assert not bool(mdp.joint_pos_within(env, limit=0.29, joints=pole))
    length = env.replace(episode_length=jnp.asarray(300))
    assert bool(mdp.time_out(length)) and not bool(mdp.time_out(length.replace(episode_length=jnp.asarray(299))))


def test_height_and_contact_terminations(go1):
    q, v = go1_state(go1)
    env = go1.term_env(q, v)
    assert bool(mdp.root_height_below_minimum(env, minimum_height=0.45))
    assert not bool(mdp.root_height_below_minimum(env, minimum_height=0.35))
    assert bool(mdp.root_height_above(env, minimum_height=0.35))
    trunk = _sel(go1, mdp.SensorBodies("contact_forces", "trunk"))
    force = jnp.zeros((5, 3)).at[0].set(jnp.asarray([0.0, 0.6, 0.9]))  # |f| = 1.08 N on the trunk
    touching = env.replace(sensors={"contact_forces": {"force": force}})
    assert bool(mdp.illegal_contact(touching, threshold=1.0, sensor_cfg=trunk))
    assert not bool(mdp.illegal_contact(touching, threshold=1.1, sensor_cfg=trunk))


def test_reset_events(go1, ant, cartpole):
    key = jax.random.PRNGKey(3)
    env = ant.term_env(ant.scene.default_qpos, np.zeros(14)).replace(key=key)
    out = mdp.reset_joints_by_offset(env, position_range=(-0.2, 0.2), velocity_range=(-0.1, 0.1),
                                     joints=_sel(ant, mdp.Joints()))
    k_pos, k_vel = jax.random.split(key)
    offsets = np.asarray(jax.random.uniform(k_pos, (8,), minval=-0.2, maxval=0.2))
    lower, upper = ant.scene.mj_model.jnt_range[1:].T
    assert f(out["qpos"][7:]) == pytest.approx(np.clip(ant.scene.default_qpos[7:] + offsets, lower, upper), abs=1e-6)
    assert f(out["qpos"][:7]) == pytest.approx(ant.scene.default_qpos[:7], abs=1e-7), "the root stays"
    assert f(out["qvel"][6:]) == pytest.approx(np.asarray(jax.random.uniform(k_vel, (8,), minval=-0.1, maxval=0.1)))

    env = cartpole.term_env([0.0, 0.0], [0.0, 0.0]).replace(key=key)
    out = mdp.reset_joints_by_offset_per_joint(env, joints=_sel(cartpole, mdp.Joints()),
                                               position_range=((-1.0, 1.0), (0.5, 0.5)),
                                               velocity_range=((0.0, 0.0), (2.0, 3.0)))
    keys = jax.random.split(key, 4)
    assert float(out["qpos"][0]) == pytest.approx(float(jax.random.uniform(keys[0], (), minval=-1.0, maxval=1.0)))
    assert f(out["qpos"][1]) == pytest.approx(0.5) and f(out["qvel"][0]) == 0.0 and 2.0 <= float(out["qvel"][1]) <= 3.0

    env = go1.term_env(go1.scene.default_qpos, np.zeros(18)).replace(key=key)
    out = mdp.reset_root_state_uniform(env, pose_range={"x": (1.0, 1.0), "yaw": (0.4, 0.4)},
                                       velocity_range={"z": (0.5, 0.5)})
    assert f(out["qpos"][:3]) == pytest.approx([1.0, 0.0, 0.4], abs=1e-6)
    assert f(out["qpos"][3:7]) == pytest.approx([math.cos(0.2), 0, 0, math.sin(0.2)], abs=1e-6)
    assert f(out["qvel"][:6]) == pytest.approx([0, 0, 0.5, 0, 0, 0])
    out = mdp.reset_joints_by_scale(env, position_range=(2.0, 2.0), velocity_range=(0.0, 0.0),
                                    joints=_sel(go1, mdp.Joints(".*_thigh_joint")))
    thighs = np.asarray([go1.scene.mj_model.joint(f"{leg}_thigh_joint").qposadr[0] for leg in ("FR", "FL", "RR", "RL")])
    assert f(out["qpos"][thighs]) == pytest.approx(2 * go1.scene.default_qpos[thighs], abs=1e-6)
    push = mdp.push_by_setting_velocity(env.replace(data=env.data.replace(qvel=jnp.ones(18))),
                                        velocity_range={"x": (0.5, 0.5), "y": (-1.0, -1.0)})
    assert f(push["qvel"][:6]) == pytest.approx([1.5, 0.0, 1, 1, 1, 1])


def test_model_events(go1):
    key = jax.random.PRNGKey(5)
    m = go1.scene.mj_model
    env = go1.term_env(go1.scene.default_qpos, np.zeros(18)).replace(key=key)
    trunk = _sel(go1, mdp.Bodies("trunk"))
    out = mdp.randomize_rigid_body_mass(env, mass_distribution_params=(2.0, 2.0), bodies=trunk)
    assert out["body_mass"].np_index[0].tolist() == trunk.ids.tolist()
    assert float(out["body_mass"].values[0]) == pytest.approx(m.body_mass[trunk.ids[0]] + 2.0, rel=1e-6)
    ratio = (m.body_mass[trunk.ids[0]] + 2.0) / m.body_mass[trunk.ids[0]]
    assert f(out["body_inertia"].values[0]) == pytest.approx(m.body_inertia[trunk.ids[0]] * ratio, rel=1e-5)
    scaled = mdp.randomize_rigid_body_mass(env, mass_distribution_params=(0.5, 0.5), bodies=trunk, operation="scale")
    assert float(scaled["body_mass"].values[0]) == pytest.approx(m.body_mass[trunk.ids[0]] * 0.5, rel=1e-6)
    out = mdp.randomize_rigid_body_material(env, static_friction_range=(1.1, 1.1),
                                            bodies=_sel(go1, mdp.Bodies("FR_calf")))
    foot = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("FR_calf").id and m.geom_contype[g]]
    geoms, column = out["geom_friction"].np_index
    assert geoms.tolist() == foot and column == 0, "the sliding friction of the calf's colliding geoms only"
    assert f(out["geom_friction"].values) == pytest.approx([1.1] * len(foot))


def test_uniform_velocity_command(go1):
    term = mdp.UniformVelocityCommandCfg(ranges=mdp.VelocityRanges(lin_vel_x=(0.2, 0.2), lin_vel_y=(-0.3, -0.3),
                                                                   ang_vel_z=(0.7, 0.7)))
    env = go1.term_env(go1.scene.default_qpos, np.zeros(18)).replace(key=jax.random.PRNGKey(0))
    state = term.update(env, term.sample(env))
    assert f(state["command"]) == pytest.approx([0.2, -0.3, 0.7])
    standing = mdp.UniformVelocityCommandCfg(rel_standing_envs=1.0)
    assert f(standing.update(env, standing.sample(env))["command"]) == pytest.approx([0, 0, 0])
    heading = mdp.UniformVelocityCommandCfg(heading_command=True, ranges=mdp.VelocityRanges(heading=(1.0, 1.0)))
    q = go1.scene.default_qpos.copy()
    q[3:7] = [math.cos(0.2), 0, 0, math.sin(0.2)]  # yaw 0.4: heading error 0.6, yaw rate 0.5 x 0.6
    env = go1.term_env(q, np.zeros(18)).replace(key=jax.random.PRNGKey(0))
    assert float(heading.update(env, heading.sample(env))["command"][2]) == pytest.approx(0.3, rel=1e-4)
