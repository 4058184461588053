"""The managers' features that no built-in task uses yet, on a Cartpole config: observation groups (a critic group,
a group of separate terms), clip, scale, history and Gaussian noise; interval events; the per-env curriculum."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from fleetlab import mdp
from fleetlab.envs import Env, VecEnv
from fleetlab.tasks.cartpole.cfg import CART, POLE, cartpole


def vec_env(cfg, num_envs=4, seed=0) -> VecEnv:
    return VecEnv(Env(cfg, "Test-Managers-v0", num_envs=num_envs), num_envs=num_envs, seed=seed)


def test_groups_clip_scale_and_history():
    cfg = cartpole().replace(observations={
        "policy": mdp.ObsGroup(terms={
            "pos": mdp.ObsTerm(func=mdp.joint_pos_rel, clip=(-0.1, 0.1)),
            "vel": mdp.ObsTerm(func=mdp.joint_vel_rel, scale=2.0, history_length=3)}),
        "critic": mdp.ObsGroup(terms={
            "pos": mdp.ObsTerm(func=mdp.joint_pos_rel), "cart_vel": mdp.ObsTerm(func=mdp.joint_vel_rel,
                                                                                params={"joints": CART})},
                               concatenate_terms=False)})
    env = vec_env(cfg)
    assert env.num_obs == 2 + 2 * 3, "the policy group: 2 clipped positions, 3 x 2 scaled velocities"
    assert env.single_observation_space["critic"].shape == (3,)
    obs = env.observations
    q, v = np.asarray(env.state.qpos), np.asarray(env.state.qvel)
    np.testing.assert_allclose(obs["policy"][:, :2].numpy(), np.clip(q, -0.1, 0.1), atol=1e-6)
    history = obs["policy"][:, 2:].reshape(4, 3, 2).numpy()
    np.testing.assert_allclose(history, np.repeat(2 * v[:, None], 3, axis=1), atol=1e-6)  # filled at a reset
    assert set(obs["critic"]) == {"pos", "cart_vel"} and obs["critic"]["cart_vel"].shape == (4, 1)
    np.testing.assert_allclose(obs["critic"]["pos"].numpy(), q, atol=1e-6)
    before = history
    groups, *_ = env.step(torch.zeros(4, 1))
    after = groups["policy"][:, 2:].reshape(4, 3, 2).numpy()
    np.testing.assert_allclose(after[:, :2], before[:, 1:], atol=1e-6)  # the oldest value drops out
    np.testing.assert_allclose(after[:, 2], 2 * np.asarray(env.state.qvel), atol=1e-5)  # the newest: this step's


def test_gaussian_noise_only_where_the_group_is_corrupted():
    noisy = mdp.ObsTerm(func=mdp.joint_pos_rel, noise=mdp.GaussianNoise(std=0.5))
    cfg = cartpole().replace(observations={"policy": mdp.ObsGroup(terms={"pos": noisy}),
                                           "clean": mdp.ObsGroup(terms={"pos": noisy}, enable_corruption=False)})
    env = vec_env(cfg, num_envs=2000)
    obs = env.observations
    q = np.asarray(env.state.qpos)
    np.testing.assert_allclose(obs["clean"].numpy(), q, atol=1e-6)
    assert np.std(obs["policy"].numpy() - q) == pytest.approx(0.5, rel=0.05)


def test_interval_events_fire_on_their_timer():
    """An interval event every 0.05 s (3 policy steps at 60 Hz) kicks the cart; between kicks it is not touched."""
    def kick(env, speed: float):
        return {"qvel": env.data.qvel.at[0].add(speed)}

    cfg = cartpole().replace(events={**cartpole().events, "kick": mdp.EventTerm(
        func=kick, mode="interval", interval_range_s=(0.05, 0.05), params={"speed": 50.0})})
    env = vec_env(cfg, num_envs=2)
    speeds = []
    for _ in range(6):
        env.step(torch.zeros(2, 1))
        speeds.append(float(np.asarray(env.state.qvel)[0, 0]))
    jumps = [abs(b - a) > 20 for a, b in zip(speeds, speeds[1:])]
    assert jumps == [False, True, False, False, True], speeds


def test_curriculum_values_change_when_an_episode_ends():
    """A value per env, replaced at the end of each of its episodes: here the number of episodes it finished."""
    def episodes_done(env):
        return env.curriculum["episodes"] + 1.0

    cfg = cartpole().replace(episode_length_s=0.1,  # 6 policy steps
                             curriculum={"episodes": mdp.CurrTerm(func=episodes_done, initial=0.0)})
    env = vec_env(cfg, num_envs=3)
    assert np.asarray(env.state.persistent["curriculum"]["episodes"]).tolist() == [0.0, 0.0, 0.0]
    for i in range(13):
        *_, extras = env.step(torch.zeros(3, 1))
    assert np.asarray(env.state.persistent["curriculum"]["episodes"]).tolist() == [2.0, 2.0, 2.0]
    assert float(extras["log"]["Curriculum/episodes"]) == 2.0
    # and it survives the resets: the episode state is fresh, the curriculum value is not
    assert int(np.asarray(env.state.episode_length).max()) == 1


def test_the_jax_view_gives_the_policy_group():
    cfg = cartpole().replace(observations={
        "policy": mdp.ObsGroup(terms={"pole": mdp.ObsTerm(func=mdp.joint_pos_rel, params={"joints": POLE})}),
        "critic": mdp.ObsGroup(terms={"pos": mdp.ObsTerm(func=mdp.joint_pos_rel)})})
    env = vec_env(cfg, num_envs=2)
    obs, reward, *_ = env.step_jax(jnp.zeros((2, 1)))
    assert obs.shape == (2, 1) and reward.shape == (2,)
    np.testing.assert_allclose(np.asarray(obs)[:, 0], np.asarray(env.state.qpos)[:, 1], atol=1e-6)
