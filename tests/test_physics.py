"""The MJX core against plain MuJoCo on the same model, and the sim module's error paths."""

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from fleetlab.envs import make
from fleetlab.errors import FleetlabError
from fleetlab.sim import load_physics
from fleetlab.tasks.cartpole.cfg import XML


@pytest.mark.parametrize("impl", ["jax", "warp"])
def test_mjx_trajectory_matches_mj_step(impl):
    env = make("Fleet-Cartpole-v0", num_envs=3, seed=1, impl=impl)
    assert env.core.physics.impl == impl
    qpos0, qvel0 = np.asarray(env.state.qpos), np.asarray(env.state.qvel)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(40, 3, 1)).astype(np.float32) * 0.3

    m = mujoco.MjModel.from_xml_path(XML)
    m.opt.timestep = env.cfg.sim_dt
    refs = []
    for i in range(3):
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = qpos0[i], qvel0[i]
        traj = []
        for a in actions[:, i]:
            d.ctrl[:] = a * env.cfg.action_scale
            for _ in range(env.cfg.decimation):
                mujoco.mj_step(m, d)
            traj.append(np.concatenate([d.qpos, d.qvel]))
        refs.append(traj)

    got = []
    for a in actions:
        env.step_jax(jnp.asarray(a))
        got.append(np.concatenate([np.asarray(env.state.qpos), np.asarray(env.state.qvel)], axis=1))
    got = np.stack(got, axis=1)  # (envs, steps, 4)
    lengths = np.asarray(env.state.episode_length)
    assert (lengths == 40).all(), "no env may have reset during this short, gentle rollout"
    np.testing.assert_allclose(got, np.asarray(refs), atol=2e-3, rtol=1e-3)
    assert np.abs(got[:, -1] - got[:, 0]).max() > 0.05, "the state must actually move"


def test_decimation_and_dt():
    physics = load_physics(XML, sim_dt=1 / 120, decimation=2)
    assert physics.dt == pytest.approx(1 / 60)
    env = make("Isaac-Cartpole-v0", num_envs=1)
    assert env.max_episode_length == 300


def test_unknown_impl_and_auto():
    from fleetlab.sim.mjx import resolve_impl

    with pytest.raises(FleetlabError, match="unknown physics impl"):
        load_physics(XML, sim_dt=0.01, decimation=1, impl="bogus")
    assert resolve_impl("auto", "cpu") == "jax", "the JAX implementation is the faster one on a CPU"
    assert resolve_impl("auto", "cuda:0") == "warp", "MuJoCo Warp on a GPU when warp-lang is installed"
    assert load_physics(XML, sim_dt=0.01, decimation=1, impl="auto").impl == "jax"


def test_jax_does_not_preallocate_the_gpu():
    import os

    import fleetlab  # noqa: F401

    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_unknown_device_is_a_clear_error():
    with pytest.raises(FleetlabError, match="unknown device"):
        make("Isaac-Cartpole-v0", num_envs=2, device="tpu:0")
    with pytest.raises(FleetlabError, match="GPU"):
        make("Isaac-Cartpole-v0", num_envs=2, device="cuda:0")
