"""Unitree Go1 on flat ground (issue C, a config of the term library since issue H): sizes and ids, the feet's
contacts and air time in a scripted drop, the trunk-contact termination, the randomization ranges, the command
resampling, play's metrics, and short training runs (one per library, and 2 processes under torchrun). Each
term's formula is tested by hand in test_mdp.py."""

import dataclasses
import json
import os

import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import PYTHON, REPO, run_cmd, torchrun

from fleetlab.envs import Env, VecEnv, make, resolve
from fleetlab.tasks.go1.cfg import go1_flat, go1_flat_play

TASK = "Isaac-Velocity-Flat-Unitree-Go1-v0"
IMPLS = pytest.mark.parametrize("impl", ["jax", "warp"])


def vec_env(cfg, num_envs: int, seed: int = 0, impl: str = "jax") -> VecEnv:
    return VecEnv(Env(cfg, "Fleet-Go1-Flat-v0", impl=impl, num_envs=num_envs), num_envs=num_envs, seed=seed)


def with_scene(cfg, **changes):
    return cfg.replace(scene=dataclasses.replace(cfg.scene, **changes))


def with_event_params(cfg, name: str, **params):
    event = cfg.events[name]
    return cfg.replace(events={**cfg.events, name: dataclasses.replace(event, params={**event.params, **params})})


def test_sizes_ids_and_the_play_variant():
    env = make(TASK, num_envs=3, seed=0)
    assert resolve(TASK).id == "Fleet-Go1-Flat-v0" and env.num_obs == 48 and env.num_actions == 12
    assert env.step_dt == pytest.approx(0.02) and env.max_episode_length == 1000
    assert env.core.physics.mj_model.body_subtreemass[1] == pytest.approx(12.74, abs=0.05)
    assert "Episode_Termination/base_contact" in env.log_names and "Episode_Reward/feet_air_time" in env.log_names
    assert set(env.state.persistent["model"]) == {"body_mass", "body_inertia", "geom_friction"}
    play = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=3, seed=0)
    assert play.state.persistent["model"] == {} and not play.cfg.observations["policy"].enable_corruption
    assert resolve("Isaac-Velocity-Flat-Unitree-Go1-Play-v0").plays == "Fleet-Go1-Flat-v0"
    # the play variant observes without noise: at rest the joint offsets are exactly zero
    assert torch.equal(play.reset()[0]["policy"][:, 12:24], torch.zeros(3, 12))
    assert env.reset()[0]["policy"][:, 12:24].abs().max() > 0, "training observations are noisy"


def test_the_pd_action_holds_the_default_pose():
    """JointPositionAction(stiffness=35, damping=0.5): MuJoCo's actuators become kp (target - q) - kd qdot with the
    target default + 0.25 action, whatever biasprm the MJCF had."""
    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=1, seed=0)
    m = env.core.physics.mj_model
    assert np.allclose(m.actuator_gainprm[:, 0], 35.0) and np.allclose(m.actuator_biasprm[:, :3], [0.0, -35.0, -0.5])
    ctrl = np.asarray(env.core.actions.ctrl(jnp.ones(12)))
    assert np.allclose(ctrl, env.core.scene.default_qpos[7:] + 0.25)


@IMPLS
def test_a_scripted_drop_lands_the_feet_and_resets_their_air_time(impl):
    """Dropped from 0.55 m with the legs held at the default pose: the feet are in the air, then all four touch
    down; at the touchdown step the contact time is one step and last_air_time holds the fall's duration."""
    env = vec_env(with_scene(go1_flat_play(), init_root_pos=(0.0, 0.0, 0.55)), 2, impl=impl)
    dt = env.step_dt
    feet = slice(1, 5)  # the sensor's bodies: trunk, then the four calves
    contacts, landed_at = [], None
    for i in range(40):
        env.step(torch.zeros(2, 12))
        times = {k: np.asarray(v)[0, feet] for k, v in env.state.episode["sensors"]["contact_forces"].items()}
        contact = times["contact_time"] > 0
        contacts.append(contact)
        touched = contact & np.isclose(times["contact_time"], dt)
        if landed_at is None and touched.any():
            landed_at = i
            assert np.allclose(times["last_air_time"][touched], i * dt, atol=1e-5), times["last_air_time"]
            assert (times["air_time"][touched] == 0).all()
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
    # Isaac Lab's flat Go1 fixes friction at 0.8; a range to see it drawn per env
    cfg = with_event_params(go1_flat(), "physics_material", static_friction_range=(0.5, 1.25))
    env = vec_env(cfg, 2000)
    m = env.core.physics.mj_model
    trunk, feet = m.body("trunk").id, [g for g in range(m.ngeom) if m.geom_bodyid[g] in
                                        [m.body(f"{leg}_calf").id for leg in ("FR", "FL", "RR", "RL")]
                                        and m.geom_contype[g]]
    # the env keeps only the entries the events set: the trunk's mass and inertia, the feet's friction
    assert env.core.events.model_fields["body_mass"][0].tolist() == [trunk]
    assert sorted(env.core.events.model_fields["geom_friction"][0].tolist()) == sorted(feet)
    model = {k: np.asarray(v) for k, v in env.state.persistent["model"].items()}
    added = model["body_mass"][:, 0] - m.body_mass[trunk]
    assert -1.0 <= added.min() < -0.9 and 2.9 < added.max() <= 3.0
    ratio = model["body_inertia"][:, 0] / m.body_inertia[trunk]
    assert np.allclose(ratio, (model["body_mass"][:, 0] / m.body_mass[trunk])[:, None], rtol=1e-5)
    friction = model["geom_friction"]
    assert friction.shape == (2000, len(feet)) and 0.5 <= friction.min() < 0.55 and 1.2 < friction.max() <= 1.25
    # the env's model: the shared one with these entries
    entries = {k: v[7] for k, v in env.state.persistent["model"].items()}
    one = env.core.events.model_with(env.core.physics.model, entries)
    assert float(one.body_mass[trunk]) == pytest.approx(float(model["body_mass"][7, 0]))
    assert np.allclose(np.delete(np.asarray(one.body_mass), trunk), np.delete(m.body_mass, trunk)), "only the trunk"
    # drawn once per env at startup, kept across resets; a heavier trunk sits lower on the same PD gains
    cfg = with_event_params(go1_flat(), "reset_base", pose_range={"x": (-0.5, 0.5), "y": (-0.5, 0.5)})
    env = vec_env(cfg, 8)
    before = np.asarray(env.state.persistent["model"]["body_mass"]).copy()
    for _ in range(50):
        env.step(torch.zeros(8, 12))
    assert np.array_equal(before, np.asarray(env.state.persistent["model"]["body_mass"]))
    added, height = before[:, 0], np.asarray(env.state.qpos[:, 2])
    assert np.corrcoef(added, height)[0, 1] < -0.9, (added, height)


def _command(env) -> np.ndarray:
    return np.asarray(env.state.episode["commands"]["base_velocity"]["command"]).copy()


def test_commands_are_sampled_per_env_and_resampled_on_time():
    env = make(TASK, num_envs=4000, seed=0)
    command = _command(env)
    assert (np.abs(command) <= 1.0).all() and command.std(0).min() > 0.5, "uniform in [-1, 1] per env"
    standing = (np.abs(command).sum(1) == 0).mean()
    assert 0.01 < standing < 0.03, f"about 2% stand still, got {standing}"
    cfg = go1_flat()
    term = dataclasses.replace(cfg.commands["base_velocity"], resampling_time_range=(0.06, 0.06))  # every 3 steps
    short = vec_env(cfg.replace(commands={"base_velocity": term}), 8, seed=1)
    seen = [_command(short)]
    for _ in range(6):
        short.step(torch.zeros(8, 12))
        seen.append(_command(short))
    changed = [not np.allclose(a, b) for a, b in zip(seen, seen[1:])]
    assert changed == [False, False, True, False, False, True], changed
    assert np.allclose(np.asarray(short.state.obs[:, 9:12]), seen[-1], atol=0), "the obs carries the command"


def test_heading_control_turns_towards_the_heading():
    """With heading_command, the yaw-rate command is stiffness x (heading - yaw), clipped, every step."""
    cfg = go1_flat_play()
    term = dataclasses.replace(cfg.commands["base_velocity"], heading_command=True, rel_heading_envs=1.0,
                               rel_standing_envs=0.0)
    env = vec_env(cfg.replace(commands={"base_velocity": term}), 64)
    state = env.state.episode["commands"]["base_velocity"]
    yaw = 2 * np.arctan2(np.asarray(env.state.qpos[:, 6]), np.asarray(env.state.qpos[:, 3]))
    error = np.arctan2(np.sin(np.asarray(state["heading"]) - yaw), np.cos(np.asarray(state["heading"]) - yaw))
    assert np.allclose(np.asarray(state["command"])[:, 2], np.clip(0.5 * error, -1, 1), atol=1e-5)


def test_play_reports_tracking_errors_and_falls():
    from fleetlab.rl.evaluation import evaluate

    env = make("Isaac-Velocity-Flat-Unitree-Go1-Play-v0", num_envs=4, seed=0)
    out = evaluate(env, lambda obs: torch.zeros(obs.shape[0], 12), steps=30)
    metrics = out["metrics"]
    # standing still: the tracking error is the command itself
    command = _command(env)
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
