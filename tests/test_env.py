"""Env core and VecEnv: auto-reset, time-outs, reward terms, reset ranges, torch/JAX views, bad input."""

import math

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from fleetlab.envs import make, to_jax, to_torch
from fleetlab.errors import FleetlabError
from fleetlab.tasks.cartpole.cfg import cartpole

# the env behaviour below must not depend on the physics implementation (CI runs both on CPU)
IMPLS = pytest.mark.parametrize("impl", ["jax", "warp"])


@IMPLS
def test_time_out_truncates_and_auto_resets(impl):
    env = make("Isaac-Cartpole-v0", num_envs=4, seed=0, impl=impl)
    env.episode_length_buf = torch.tensor([0, 298, 299 - 5, 10])
    zero = torch.zeros(4, 1)
    _, _, terminated, truncated, extras = env.step(zero)
    assert truncated.tolist() == [False, False, False, False]
    _, _, terminated, truncated, extras = env.step(zero)  # env 1 reaches 300 steps
    assert truncated.tolist() == [False, True, False, False]
    assert torch.equal(extras["time_outs"], truncated)
    lengths = env.episode_length_buf
    assert lengths[1] == 0 and lengths[0] == 2 and lengths[3] == 12
    assert extras["log"]["Episode_Termination/time_out"].item() == 1.0


@IMPLS
def test_termination_resets_with_fresh_state_and_reports_failure(impl):
    env = make("Isaac-Cartpole-v0", num_envs=2, seed=0, impl=impl)
    # push env 0 past the 3 m bound
    env.state = env.state.replace(qpos=env.state.qpos.at[0, 0].set(2.999), qvel=env.state.qvel.at[0, 0].set(5.0))
    obs, reward, terminated, truncated, extras = env.step(torch.tensor([[1.0], [0.0]]))
    assert terminated.tolist() == [True, False]
    assert abs(float(obs["policy"][0, 0])) <= 1.0, "a done env's obs is already the next episode's (cart in U(-1,1))"
    dt = env.step_dt
    assert reward[0].item() < -1.9 * dt, "the terminating penalty (-2 x dt) replaces the alive bonus"
    assert reward[1].item() > 0
    assert env.episode_length_buf[0] == 0 and env.episode_length_buf[1] == 1


def test_reward_terms_match_isaac_lab_formula():
    env = make("Isaac-Cartpole-v0", num_envs=1, seed=3)
    qpos = np.asarray([[0.5, 0.3]], np.float32)  # numpy: the env donates its state's JAX buffers to each step
    qvel = np.asarray([[0.2, -0.4]], np.float32)
    env.state = env.state.replace(qpos=jnp.asarray(qpos), qvel=jnp.asarray(qvel))
    obs, reward, terminated, truncated, _ = env.step(torch.zeros(1, 1))
    cart, pole, cart_v, pole_v = obs["policy"][0].tolist()  # obs after the step = the state the reward sees
    expected = (1.0 - 1.0 * pole**2 - 0.01 * abs(cart_v) - 0.005 * abs(pole_v)) * (1 / 60)
    assert not terminated[0]
    assert reward[0].item() == pytest.approx(expected, rel=1e-4)

    direct = make("Isaac-Cartpole-Direct-v0", num_envs=1, seed=3)
    direct.state = direct.state.replace(qpos=jnp.asarray(qpos), qvel=jnp.asarray(qvel))
    obs, reward, *_ = direct.step(torch.zeros(1, 1))
    pole, pole_v, cart, cart_v = obs["policy"][0].tolist()  # Direct orders (pole, cart)
    assert reward[0].item() == pytest.approx(1.0 - pole**2 - 0.01 * abs(cart_v) - 0.005 * abs(pole_v), rel=1e-4)


def test_terminated_reward_and_direct_pole_limit():
    direct = make("Isaac-Cartpole-Direct-v0", num_envs=1)
    direct.state = direct.state.replace(qpos=jnp.asarray([[0.0, 1.6]]), qvel=jnp.zeros((1, 2)))
    _, reward, terminated, *_ = direct.step(torch.zeros(1, 1))
    assert terminated[0]
    assert reward[0].item() == pytest.approx(-2.0 - 1.6**2, abs=0.1)
    managed = make("Isaac-Cartpole-v0", num_envs=1)
    managed.state = managed.state.replace(qpos=jnp.asarray([[0.0, 1.6]]), qvel=jnp.zeros((1, 2)))
    assert not managed.step(torch.zeros(1, 1))[2][0], "the manager-based task does not end on the pole angle"


def test_reset_ranges():
    n = 4096
    env = make("Isaac-Cartpole-v0", num_envs=n, seed=7)
    q, v = np.asarray(env.state.qpos), np.asarray(env.state.qvel)
    params = cartpole().events["reset_joints"].params
    (cart_pos, pole_pos), (cart_vel, pole_vel) = params["position_range"], params["velocity_range"]
    for x, (lo, hi) in [(q[:, 0], cart_pos), (q[:, 1], pole_pos), (v[:, 0], cart_vel), (v[:, 1], pole_vel)]:
        assert x.min() >= lo and x.max() <= hi
        assert x.min() < lo + 0.05 * (hi - lo) and x.max() > hi - 0.05 * (hi - lo), "the whole range is used"
    direct = make("Isaac-Cartpole-Direct-v0", num_envs=n, seed=7)
    q, v = np.asarray(direct.state.qpos), np.asarray(direct.state.qvel)
    assert np.all(q[:, 0] == 0) and np.all(v == 0), "Direct resets only the pole angle"
    assert np.abs(q[:, 1]).max() <= 0.25 * math.pi and np.abs(q[:, 1]).max() > 0.2 * math.pi


def test_seeds_give_different_resets():
    a = make("Isaac-Cartpole-v0", num_envs=8, seed=1)
    b = make("Isaac-Cartpole-v0", num_envs=8, seed=2)
    c = make("Isaac-Cartpole-v0", num_envs=8, seed=1)
    assert not np.allclose(np.asarray(a.state.qpos), np.asarray(b.state.qpos))
    np.testing.assert_array_equal(np.asarray(a.state.qpos), np.asarray(c.state.qpos))


def test_torch_and_jax_views_share_memory():
    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    t = to_torch(x)
    assert t.data_ptr() == x.unsafe_buffer_pointer()
    back = to_jax(t)
    assert back.unsafe_buffer_pointer() == t.data_ptr()
    env = make("Isaac-Cartpole-v0", num_envs=5)
    obs_t, *_ = env.step(torch.zeros(5, 1))
    obs_j, *_ = env.step_jax(jnp.zeros((5, 1)))
    assert isinstance(obs_t["policy"], torch.Tensor) and obs_t["policy"].shape == (5, 4)
    assert obs_j.shape == (5, 4) and not isinstance(obs_j, torch.Tensor)


@IMPLS
def test_step_torch_outputs_are_views_of_one_packed_buffer(impl):
    env = make("Isaac-Cartpole-v0", num_envs=6, impl=impl)
    obs, reward, *_ = env.step(torch.zeros(6, 1))
    base = obs["policy"].untyped_storage().data_ptr()
    assert reward.untyped_storage().data_ptr() == base, "reward and obs come out of one DLPack array, no copies"


@IMPLS
def test_episode_log_in_extras(impl):
    env = make("Isaac-Cartpole-v0", num_envs=64, seed=0, impl=impl)
    env.episode_length_buf = torch.full((64,), 299)
    _, _, _, truncated, extras = env.step(torch.zeros(64, 1))
    log = extras["log"]
    assert truncated.sum() > 0
    assert set(log) >= {"Episode_Reward/alive", "Episode_Reward/pole_pos", "Episode_Termination/time_out"}
    assert log["Episode_Reward/alive"].item() > 0
    assert math.isnan(env.step(torch.zeros(64, 1))[4]["log"]["Episode_Reward/alive"].item()), "NaN when none ended"


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_bad_num_envs(bad):
    with pytest.raises(FleetlabError, match="num_envs must be a positive integer"):
        make("Isaac-Cartpole-v0", num_envs=bad)


def test_unknown_task_names_the_known_ones():
    with pytest.raises(FleetlabError, match="unknown task 'Isaac-Cartpol-v0'.*Did you mean"):
        make("Isaac-Cartpol-v0", num_envs=1)


def test_gymnasium_registration():
    import gymnasium

    env = gymnasium.make("Isaac-Cartpole-Direct-v0", num_envs=3)
    assert env.unwrapped.num_envs == 3
    assert env.unwrapped.single_observation_space["policy"].shape == (4,)
