"""Ant and Humanoid (issue G): physics sanity, the Isaac Lab reward terms, resets, and a short training run per
library. Small num_envs on CPU."""

import json
import math
import os
import re

import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import PYTHON, run_cmd

from fleetlab.envs import make
from fleetlab.envs.registry import resolve
from fleetlab.errors import FleetlabError
from fleetlab.sim.options import PhysicsOptions

TASKS = {"Isaac-Ant-v0": (60, 8, 0.31), "Isaac-Humanoid-v0": (87, 21, 0.8)}


@pytest.fixture(scope="module", params=list(TASKS))
def env(request):
    return make(request.param, num_envs=8, seed=0)


def _task_id(env):
    return "Isaac-Ant-v0" if env.num_actions == 8 else "Isaac-Humanoid-v0"


def test_sizes_and_aliases(env):
    num_obs, num_actions, height = TASKS[_task_id(env)]
    assert env.observations["policy"].shape == (8, num_obs) and env.num_actions == num_actions
    assert env.cfg.terminations["torso_height"].params["minimum_height"] == height
    assert resolve(_task_id(env)).id == _task_id(env).replace("Isaac", "Fleet")
    assert env.max_episode_length == 16 * 60, "16 s episodes at 60 Hz"


def test_reset_noise_is_inside_the_limits_and_at_rest(env):
    m, qpos0 = env.core.physics.mj_model, env.core.scene.default_qpos
    lower, upper = m.jnt_range[1:].T
    qpos, qvel = np.asarray(env.state.qpos), np.asarray(env.state.qvel)
    joints = qpos[:, 7:]
    assert (joints >= lower - 1e-6).all() and (joints <= upper + 1e-6).all()
    assert np.abs(joints - qpos0[7:]).max() <= 0.2 + 1e-6 and np.ptp(joints, axis=0).max() > 0.05
    assert np.allclose(qpos[:, :7], qpos0[:7]) and np.allclose(qvel[:, :6], 0)
    assert np.abs(qvel[:, 6:]).max() <= 0.1 + 1e-6


def test_observation_terms_at_reset(env):
    obs = env.observations["policy"]
    n = env.num_actions
    assert torch.allclose(obs[:, 0], torch.as_tensor(np.asarray(env.state.qpos[:, 2])))  # torso height
    yaw, roll, angle_to_target, up, heading = obs[:, 7:12].T
    assert torch.allclose(up, torch.ones(8), atol=1e-5) and torch.allclose(heading, torch.ones(8), atol=1e-5)
    assert torch.allclose(yaw, torch.zeros(8), atol=1e-5) and torch.allclose(angle_to_target, torch.zeros(8), atol=1e-4)
    assert (obs[:, 12:12 + n].abs() <= 1 + 1e-5).all(), "joint positions normalized to [-1, 1]"
    assert torch.equal(obs[:, -n:], torch.zeros(8, n)), "last action is zero after a reset"


@pytest.mark.parametrize("impl", ["jax", "warp"])
def test_a_step_observes_the_action_and_the_feet_forces(impl):
    env = make("Isaac-Ant-v0", num_envs=4, seed=1, impl=impl)
    for _ in range(30):  # let the ant settle on its feet
        obs, *_ = env.step(torch.zeros(4, 8))
    action = torch.linspace(-1, 1, 8).repeat(4, 1)
    obs = env.step(action)[0]["policy"]
    assert torch.allclose(obs[:, -8:], action)
    feet = obs[:, 28:52]
    assert feet.abs().sum(1).min() > 0, "feet touching the floor carry a wrench"


@pytest.mark.parametrize("impl", ["jax", "warp"])
def test_ant_stands_with_zero_action_and_humanoid_falls(impl):
    ant = make("Isaac-Ant-v0", num_envs=4, seed=0, impl=impl)
    humanoid = make("Isaac-Humanoid-v0", num_envs=4, seed=0, impl=impl)
    ant_terminated = humanoid_terminated = 0
    for _ in range(120):  # 2 s
        ant_terminated += int(ant.step(torch.zeros(4, 8))[2].sum())
        humanoid_terminated += int(humanoid.step(torch.zeros(4, 21))[2].sum())
    assert ant_terminated == 0 and float(ant.state.qpos[:, 2].min()) > 0.31
    assert humanoid_terminated >= 4, "a limp humanoid falls below 0.8 m and is reset"
    assert float(humanoid.state.episode_length.max()) < 120


def _terms(env, qpos, qvel, action, prev_qpos):
    core = env.core
    term_env = core.term_env(qpos, qvel, action=jnp.asarray(action), prev_qpos=jnp.asarray(prev_qpos))
    return core.rewards.unweighted(term_env.replace(terminated=jnp.asarray(False)))


def test_rewards_progress_heading_upright_energy_and_limits():
    env = make("Isaac-Humanoid-v0", num_envs=1)
    m = env.core.physics.mj_model
    gear_scaled = m.actuator_gear[:, 0] / m.actuator_gear[:, 0].max()
    q0 = env.core.scene.default_qpos.astype(np.float32)
    dt = env.step_dt
    ahead = q0.copy()
    ahead[0] += 0.02
    qvel = np.zeros(27, np.float32)
    qvel[6:] = 1.0
    action = np.full(21, 0.5, np.float32)
    t = _terms(env, ahead, qvel, action, q0)
    assert float(t["progress"]) == pytest.approx(0.02 / dt, rel=1e-3), "potential change toward +x per second"
    assert float(t["upright"]) == 1.0 and float(t["move_to_target"]) == 1.0 and float(t["alive"]) == 1.0
    assert float(t["action_l2"]) == pytest.approx(21 * 0.25)
    assert float(t["energy"]) == pytest.approx(0.5 * gear_scaled.sum(), rel=1e-5)
    assert float(t["joint_pos_limits"]) == 0.0
    # turned 90 degrees left (facing +y): heading projection 0, move_to_target 0; at a joint limit: a penalty
    turned = q0.copy()
    turned[3:7] = [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]
    turned[7] = m.jnt_range[1, 1]
    t = _terms(env, turned, np.zeros(27, np.float32), np.zeros(21, np.float32), turned)
    assert abs(float(t["move_to_target"])) < 1e-5 and float(t["progress"]) == pytest.approx(0, abs=1e-3)
    assert float(t["joint_pos_limits"]) == pytest.approx(gear_scaled[0], rel=1e-4)
    # upside down: not upright
    flipped = q0.copy()
    flipped[3:7] = [0, 1, 0, 0]
    assert float(_terms(env, flipped, np.zeros(27, np.float32), np.zeros(21, np.float32), flipped)["upright"]) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASKS))
def test_observations_agree_between_jax_and_warp(task):
    """The same actions from the same start on both MJX implementations: the observations, feet wrenches included
    (JAX: MJX's post-constraint RNE after the step; Warp: opt.run_rne_postconstraint inside it), agree over 10
    policy steps. Both solvers stop at the MJCF's 4 iterations, where their contact solutions differ a little: Ant
    within 2e-2 everywhere; Humanoid (feet wrench observations up to ~11) within 0.15, measured 0.146 at most, on
    the feet wrenches and a few joint velocities. Almost every element agrees far closer (median below 1e-3)."""
    envs = {impl: make(task, num_envs=2, seed=3, impl=impl) for impl in ("jax", "warp")}
    assert {e.core.physics.impl for e in envs.values()} == {"jax", "warp"}
    actions = np.random.default_rng(0).uniform(-0.5, 0.5, (10, 2, envs["jax"].num_actions)).astype(np.float32)
    obs = {impl: [] for impl in envs}
    for a in actions:
        for impl, env in envs.items():
            obs[impl].append(np.asarray(env.step_jax(jnp.asarray(a))[0]))
    jax_obs, warp_obs = np.stack(obs["jax"]), np.stack(obs["warp"])
    feet_term = envs["jax"].cfg.observations["policy"].terms["feet_body_forces"]
    n_act, n_feet = envs["jax"].num_actions, len(feet_term.params["bodies"].names)
    feet = slice(-n_act - 6 * n_feet, -n_act)  # the feet wrenches come just before the last action
    assert np.abs(jax_obs[..., feet]).max() > 1e-2, "the feet must carry load"
    np.testing.assert_allclose(warp_obs, jax_obs, atol=2e-2 if task == "Isaac-Ant-v0" else 0.15)
    assert np.median(np.abs(warp_obs - jax_obs)) < 1e-3


def test_warp_body_forces_come_from_the_last_substep_only():
    """Physics.advance turns MuJoCo Warp's run_rne_postconstraint off in every substep but the last (the earlier
    substeps' body forces were overwritten unread): the observations, feet wrenches included, are bit-identical to
    computing them in every substep."""
    actions = np.random.default_rng(1).uniform(-0.5, 0.5, (6, 2, 21)).astype(np.float32)

    def observations(every_substep: bool):
        physics = PhysicsOptions(contacts_per_env=16, constraints_per_env=96, rne_every_substep=every_substep)
        env = make("Isaac-Humanoid-v0", num_envs=2, seed=3, impl="warp", physics=physics)
        return np.stack([np.asarray(env.step_jax(jnp.asarray(a))[0]) for a in actions])

    last_only = observations(False)
    every = observations(True)
    feet = slice(-21 - 12, -21)
    assert np.abs(every[..., feet]).max() > 1e-2, "the feet must carry load"
    np.testing.assert_array_equal(last_only, every)


def test_a_warp_buffer_overflow_is_a_clear_error(monkeypatch):
    """MuJoCo Warp allocates its contact buffer up front; a step that needs more is wrong, so the env stops with
    a one-line error instead of training on it."""
    from fleetlab.sim import mjx as sim_mjx

    monkeypatch.setattr(sim_mjx, "WARP_CONTACTS_PER_ENV", 1)  # an ant standing on 4 feet needs 4
    env = make("Isaac-Ant-v0", num_envs=2, seed=0, impl="warp")
    with pytest.raises(FleetlabError, match="MuJoCo Warp ran out of its contact or constraint buffers"):
        for _ in range(30):
            env.step(torch.zeros(2, env.num_actions))


def test_walking_forward_earns_more_than_standing():
    """The weighted reward of a torso moving at 1 m/s toward the target beats standing still by ~1 m/s x dt."""
    env = make("Isaac-Ant-v0", num_envs=2, seed=0)
    qvel = np.zeros((2, 14), np.float32)
    qvel[0, 0] = 1.0
    env.state = env.state.replace(qvel=jnp.asarray(qvel))
    reward = env.step(torch.zeros(2, 8))[1]
    assert float(reward[0] - reward[1]) == pytest.approx(env.step_dt, rel=0.25)


@pytest.mark.slow
@pytest.mark.parametrize("library", ["rsl_rl", "rl_games", "skrl"])
@pytest.mark.parametrize("task", ["Isaac-Ant-v0", "Isaac-Humanoid-v0"])
@pytest.mark.parametrize("impl", ["jax", "warp"])
def test_short_training_run(tmp_path, library, task, impl):
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", library, "--task", task, "--num_envs", "64",
                    "--max_iterations", "2", "--headless", "--physics_impl", impl], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summaries = [os.path.join(d, "summary.json") for d, _, f in os.walk(tmp_path) if "summary.json" in f]
    assert len(summaries) == 1
    with open(summaries[0]) as f:
        summary = json.load(f)
    assert summary["task"] == task.replace("Isaac", "Fleet") and summary["checksums_identical"]
    assert summary["physics_impl"] == impl and f"physics {impl}" in proc.stdout
    if library == "rsl_rl":  # play the checkpoint: the locomotion success metric is reported
        proc = run_cmd([PYTHON, "-m", "fleetlab", "play", "--library", library, "--task", task, "--num_envs", "4",
                        "--steps", "40", "--headless", "--physics_impl", impl], cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        balanced = re.search(r"torso above the termination height for \d+\.\d% of 40 steps", proc.stdout)
        assert balanced, proc.stdout[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("library", ["rsl_rl", "rl_games"])
def test_two_processes_keep_identical_weights_with_normalized_inputs(tmp_path, library):
    """Ant's configs normalize observations (and rl_games values): under torchrun with 2 processes (gloo) the
    normalizers must see both ranks' batches, or the weights drift apart."""
    from conftest import REPO, torchrun

    script = os.path.join(REPO, "scripts", "reinforcement_learning", library, "train.py")
    proc = torchrun(2, [script, "--task=Isaac-Ant-v0", "--headless", "--distributed", "--num_envs=64",
                        "--max_iterations=2"], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summaries = [os.path.join(d, "summary.json") for d, _, f in os.walk(tmp_path) if "summary.json" in f]
    with open(summaries[0]) as f:
        summary = json.load(f)
    assert summary["world_size"] == 2 and summary["num_envs_total"] == 128
    assert summary["checksums_identical"], [r["checksum"] for r in summary["ranks"]]
