"""Unitree Go1 on flat ground (issue C): sizes and ids, each reward term by hand, the feet's contacts and air time
in a scripted drop, the trunk-contact termination, the randomization ranges, the command resampling, play's
metrics, and short training runs (one per library, and 2 processes under torchrun)."""

import json
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import PYTHON, REPO, run_cmd, torchrun

from fleetlab.envs import make, resolve
from fleetlab.tasks.go1.cfg import Go1FlatCfg
from fleetlab.tasks.go1.env import Go1Consts, extra_reset, model_of, reward_terms

TASK = "Isaac-Velocity-Flat-Unitree-Go1-v0"
IMPLS = pytest.mark.parametrize("impl", ["jax", "warp"])


def test_sizes_ids_and_the_play_variant():
    env = make(TASK, num_envs=3, seed=0)
    assert resolve(TASK).id == "Fleet-Go1-Flat-v0" and env.num_obs == 48 and env.num_actions == 12
    assert env.step_dt == pytest.approx(0.02) and env.max_episode_length == 1000
    assert env.core.physics.mj_model.body_subtreemass[1] == pytest.approx(12.74, abs=0.05)
    assert "Episode_Termination/base_contact" in env.log_names and "Episode_Reward/feet_air_time" in env.log_names
    play = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=3, seed=0)
    assert not play.cfg.noise and not play.cfg.randomize and play.core.task.model_of is None
    assert resolve("Isaac-Velocity-Flat-Unitree-Go1-Play-v0").plays == "Fleet-Go1-Flat-v0"
    # the play variant observes without noise: at rest the joint offsets are exactly zero
    assert torch.equal(play.reset()[0]["policy"][:, 12:24], torch.zeros(3, 12))
    assert play.reset()[0]["policy"][:, 12:24].abs().max() == 0
    assert env.reset()[0]["policy"][:, 12:24].abs().max() > 0, "training observations are noisy"


def test_each_reward_term_by_hand():
    env = make(TASK, num_envs=1, seed=0)
    cfg, consts = env.cfg, Go1Consts.from_cfg(env.cfg)
    yaw = 0.3
    q = consts.qpos0.copy()
    q[3:7] = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
    q[7:] += 0.1
    v = np.zeros(18)
    v[0:3] = [0.5 * math.cos(yaw), 0.5 * math.sin(yaw), 0.2]  # world: 0.5 m/s forward in the base frame, 0.2 up
    v[3:6] = [0.1, -0.2, 0.4]  # base frame angular velocity
    v[6:] = 0.5
    torques = np.linspace(-2, 2, 12)
    data = env.core.physics.data(jnp.asarray(q, jnp.float32), jnp.asarray(v, jnp.float32))
    data = data.replace(actuator_force=jnp.asarray(torques, jnp.float32))
    action, prev_action = np.full(12, 0.3), np.full(12, 0.1)
    extra = {"command": jnp.asarray([0.8, 0.1, 0.5]), "prev_qvel": jnp.zeros(18), "action": jnp.asarray(action),
             "prev_action": jnp.asarray(prev_action), "last_air_time": jnp.asarray([0.7, 0.2, 0.0, 0.0]),
             "first_contact": jnp.asarray([1.0, 1.0, 0.0, 0.0])}
    t = {k: float(x) for k, x in reward_terms(cfg, data, jnp.asarray(action), jnp.asarray(False), jnp.asarray(q), extra,
                                                consts=consts, dt=0.02).items()}
    assert t["track_lin_vel_xy_exp"] == pytest.approx(math.exp(-(0.3**2 + 0.1**2) / 0.25), rel=1e-4)
    assert t["track_ang_vel_z_exp"] == pytest.approx(math.exp(-(0.1**2) / 0.25), rel=1e-4)
    assert t["lin_vel_z_l2"] == pytest.approx(0.04, rel=1e-4)
    assert t["ang_vel_xy_l2"] == pytest.approx(0.05, rel=1e-4)
    assert t["dof_torques_l2"] == pytest.approx(float(np.sum(torques**2)), rel=1e-4)
    assert t["dof_acc_l2"] == pytest.approx(12 * (0.5 / 0.02) ** 2, rel=1e-4)
    assert t["action_rate_l2"] == pytest.approx(12 * 0.04, rel=1e-4)
    assert t["feet_air_time"] == pytest.approx((0.7 - 0.5) + (0.2 - 0.5), rel=1e-4)
    assert t["flat_orientation_l2"] == pytest.approx(0.0, abs=1e-10), "yaw alone keeps the base flat"
    slow = dict(extra, command=jnp.asarray([0.05, 0.0, 0.5]))  # |cmd_xy| < 0.1: no air-time reward
    assert float(reward_terms(cfg, data, jnp.asarray(action), jnp.asarray(False), jnp.asarray(q), slow, consts=consts,
                              dt=0.02)["feet_air_time"]) == 0.0
    tilted = q.copy()
    tilted[3:7] = [math.cos(0.1), math.sin(0.1), 0, 0]  # rolled by 0.2 rad: gravity's y in the base frame sin(0.2)
    data = env.core.physics.data(jnp.asarray(tilted, jnp.float32), jnp.asarray(v, jnp.float32))
    flat = float(reward_terms(cfg, data, jnp.asarray(action), jnp.asarray(False), jnp.asarray(q), extra, consts=consts,
                              dt=0.02)["flat_orientation_l2"])
    assert flat == pytest.approx(math.sin(0.2) ** 2, rel=1e-4)


@IMPLS
def test_a_scripted_drop_lands_the_feet_and_resets_their_air_time(impl):
    """Dropped from 0.55 m with the legs held at the default pose: the feet are in the air, then all four touch
    down; at the touchdown step first_contact is set and last_air_time holds the fall's duration."""
    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=2, seed=0, impl=impl, base_height=0.55)
    dt = env.step_dt
    contacts, landed_at = [], None
    for i in range(40):
        env.step(torch.zeros(2, 12))
        extra = jax.tree_util.tree_map(np.asarray, env.state.extra)
        contacts.append(extra["contact"][0].copy())
        if landed_at is None and extra["first_contact"][0].any():
            landed_at = i
            touched = extra["first_contact"][0] > 0
            assert np.allclose(extra["last_air_time"][0][touched], i * dt, atol=1e-5), extra["last_air_time"][0]
            assert (extra["air_time"][0][touched] == 0).all()
    contacts = np.stack(contacts)
    assert not contacts[0].any(), "the feet start in the air"
    assert landed_at is not None and 3 <= landed_at <= 15, landed_at
    assert contacts[-1].all(), "then stand on all four"
    assert not env.state.terminated.any()


@IMPLS
def test_the_trunk_touching_the_ground_terminates(impl):
    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=2, seed=0, impl=impl)
    q = np.asarray(env.state.qpos).copy()
    q[0, 2] = 0.05  # env 0: the trunk (half height 0.057) pressed into the floor, upside down, legs up
    q[0, 3:7] = [0, 1, 0, 0]
    env.state = env.state.replace(qpos=jnp.asarray(q))
    _, _, terminated, _, extras = env.step(torch.zeros(2, 12))
    assert terminated.tolist() == [True, False]
    assert float(extras["log"]["Episode_Termination/base_contact"]) == 1.0


def test_randomization_ranges():
    cfg = Go1FlatCfg(friction_range=(0.5, 1.25))  # Isaac Lab's flat Go1 fixes friction at 0.8; a range to see it
    consts = Go1Consts.from_cfg(cfg)
    env = make(TASK, num_envs=1, seed=0)
    keys = jax.random.split(jax.random.PRNGKey(0), 2000)
    extra = jax.vmap(lambda k: extra_reset(cfg, k, env.core.physics, consts))(keys)
    mass, friction = np.asarray(extra["trunk_mass_add"]), np.asarray(extra["friction"])
    assert -1.0 <= mass.min() < -0.9 and 2.9 < mass.max() <= 3.0
    assert 0.5 <= friction.min() < 0.55 and 1.2 < friction.max() <= 1.25
    model = model_of(env.core.physics.model, {"trunk_mass_add": jnp.asarray(2.0), "friction": jnp.asarray(1.1)},
                     consts)
    assert float(model.body_mass[consts.base]) == pytest.approx(5.204 + 2.0, rel=1e-5)
    assert np.allclose(np.asarray(model.geom_friction)[consts.foot_geoms, 0], 1.1)
    # per env inside the env: a heavier trunk sits lower on the same PD gains
    env = make(TASK, num_envs=8, seed=0, reset_yaw_range=(0.0, 0.0))
    for _ in range(50):
        env.step(torch.zeros(8, 12))
    added, height = np.asarray(env.state.extra["trunk_mass_add"]), np.asarray(env.state.qpos[:, 2])
    assert np.corrcoef(added, height)[0, 1] < -0.9, (added, height)


def test_commands_are_sampled_per_env_and_resampled_on_time():
    env = make(TASK, num_envs=4000, seed=0)
    command = np.asarray(env.state.extra["command"])
    assert (np.abs(command) <= 1.0).all() and command.std(0).min() > 0.5, "uniform in [-1, 1] per env"
    standing = (np.abs(command).sum(1) == 0).mean()
    assert 0.01 < standing < 0.03, f"about 2% stand still, got {standing}"
    short = make(TASK, num_envs=8, seed=1, command_resample_s=0.06)  # every 3 policy steps
    seen = [np.asarray(short.state.extra["command"]).copy()]
    for _ in range(6):
        short.step(torch.zeros(8, 12))
        seen.append(np.asarray(short.state.extra["command"]).copy())
    changed = [not np.allclose(a, b) for a, b in zip(seen, seen[1:])]
    assert changed == [False, False, True, False, False, True], changed
    assert np.allclose(np.asarray(short.state.obs[:, 9:12]), seen[-1], atol=0), "the obs carries the command"


def test_play_reports_tracking_errors_and_falls():
    from fleetlab.rl.evaluation import evaluate

    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=4, seed=0)
    out = evaluate(env, lambda obs: torch.zeros(obs.shape[0], 12), steps=30)
    metrics = out["metrics"]
    # standing still: the tracking error is the command itself
    command = np.asarray(env.state.extra["command"])
    assert metrics["lin_vel_error"] == pytest.approx(np.linalg.norm(command[:, :2], axis=1).mean(), rel=0.2)
    assert metrics["yaw_rate_error"] > 0 and out["terminated_fraction"] == 0.0
    # flailing: the fall rate counts the falls among the episodes begun (one per env, and one after each fall),
    # not among the episodes that ended, which in a long play episode are mostly falls
    torch.manual_seed(0)
    out = evaluate(env, lambda obs: 3 * torch.randn(obs.shape[0], 12), steps=150)
    falls = out["episodes_ended_by_base_contact"]
    assert falls > 0 and out["episodes"] == falls + 4, out
    assert out["terminated_fraction"] == pytest.approx(falls / (4 + falls)), out
    # the mean return counts the episode each env is cut in at the last step, beside the falls: replayed with the same
    # seeds, every reward summed over every episode played
    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=4, seed=0)
    env.reset()
    torch.manual_seed(0)
    total = sum(float(env.step(3 * torch.randn(4, 12))[1].sum()) for _ in range(150))
    assert out["mean_return"] == pytest.approx(total / out["episodes"], rel=1e-4), (out, total)


@pytest.mark.slow
@pytest.mark.parametrize("library", ["rsl_rl", "rl_games", "skrl"])
def test_short_training_run(tmp_path, library):
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", library, "--task", TASK, "--num_envs", "32",
                    "--max_iterations", "2", "--headless"], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summaries = [os.path.join(d, "summary.json") for d, _, f in os.walk(tmp_path) if "summary.json" in f]
    with open(summaries[0]) as f:
        assert json.load(f)["task"] == "Fleet-Go1-Flat-v0"
    if library == "rsl_rl":
        proc = run_cmd([PYTHON, "-m", "fleetlab", "play", "--library", library, "--task",
                        "Isaac-Velocity-Flat-Unitree-Go1-Play-v0", "--num_envs", "4", "--steps", "30", "--headless",
                        "--video", "--video_length", "20"], cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "mean lin_vel_error" in proc.stdout and "mean yaw_rate_error" in proc.stdout, proc.stdout[-2000:]
        played = [os.path.join(d, "play.json") for d, _, f in os.walk(tmp_path) if "play.json" in f]
        with open(played[0]) as f:
            result = json.load(f)
        assert set(result["metrics"]) == {"lin_vel_error", "yaw_rate_error"} and "terminated_fraction" in result
        assert os.path.getsize(result["video"]) > 1000


@pytest.mark.slow
def test_two_processes_keep_identical_weights(tmp_path):
    script = os.path.join(REPO, "scripts", "reinforcement_learning", "rsl_rl", "train.py")
    proc = torchrun(2, [script, f"--task={TASK}", "--headless", "--distributed", "--num_envs=32",
                        "--max_iterations=2"], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summaries = [os.path.join(d, "summary.json") for d, _, f in os.walk(tmp_path) if "summary.json" in f]
    with open(summaries[0]) as f:
        summary = json.load(f)
    assert summary["world_size"] == 2 and summary["checksums_identical"], summary["ranks"]
