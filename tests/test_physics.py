"""The MJX core against plain MuJoCo on the same model, and the sim module's error paths."""

import subprocess
import sys

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from fleetlab.envs import make
from fleetlab.errors import FleetlabError
from fleetlab.sim import load_physics
from fleetlab.tasks.cartpole.cfg import XML

# task: (policy steps, qpos atol, qvel atol). Cartpole has no contacts. Ant and Humanoid touch the floor, where the
# solvers, each stopped after the MJCF's 4 Newton iterations, settle the contacts a little differently. Measured
# max |env - mj_step| on CPU: JAX 2e-5 (Ant) and 8e-5 (Humanoid); Warp, whose line search differs, qpos 3e-4 and
# 8e-4, qvel 1.3e-2 and 6.9e-2, from the step the feet land on (median 1e-6 and 3e-7).
TRAJECTORIES = {
    "Fleet-Cartpole-v0": (40, 2e-3, 2e-3),
    "Isaac-Ant-v0": (15, 2e-3, 3e-2),
    "Isaac-Humanoid-v0": (10, 2e-3, 0.15),
}


@pytest.mark.parametrize("impl", ["jax", "warp"])
@pytest.mark.parametrize("task", list(TRAJECTORIES))
def test_mjx_trajectory_matches_mj_step(task, impl):
    """The env's states against MuJoCo's own mj_step from the same start with the same controls. The env rebuilds
    its MJX Data from (qpos, qvel) at each policy step, so the solver's warm start begins at zero there: the
    reference does the same."""
    steps, qpos_atol, qvel_atol = TRAJECTORIES[task]
    env = make(task, num_envs=3, seed=1, impl=impl)
    assert env.core.physics.impl == impl
    qpos0, qvel0 = np.asarray(env.state.qpos), np.asarray(env.state.qvel)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(steps, 3, env.num_actions)).astype(np.float32) * 0.3

    m = env.core.physics.mj_model
    refs = []
    for i in range(3):
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = qpos0[i], qvel0[i]
        traj = []
        for a in actions[:, i]:
            d.ctrl[:] = np.asarray(env.core.actions.ctrl(a))
            d.qacc_warmstart[:] = 0
            for _ in range(env.cfg.scene.decimation):
                mujoco.mj_step(m, d)
            traj.append(np.concatenate([d.qpos, d.qvel]))
        refs.append(traj)

    got = []
    for a in actions:
        env.step_jax(jnp.asarray(a))
        got.append(np.concatenate([np.asarray(env.state.qpos), np.asarray(env.state.qvel)], axis=1))
    got = np.stack(got, axis=1)  # (envs, steps, nq + nv)
    lengths = np.asarray(env.state.episode_length)
    assert (lengths == steps).all(), "no env may have reset during this short, gentle rollout"
    refs, nq = np.asarray(refs), m.nq
    np.testing.assert_allclose(got[..., :nq], refs[..., :nq], atol=qpos_atol, rtol=1e-3)
    np.testing.assert_allclose(got[..., nq:], refs[..., nq:], atol=qvel_atol, rtol=1e-3)
    assert np.median(np.abs(got - refs)) < 1e-4
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


def test_the_process_setup_keeps_jax_from_preallocating_the_gpu():
    from fleetlab.process import import_environment

    assert import_environment()["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_unknown_device_is_a_clear_error():
    with pytest.raises(FleetlabError, match="unknown device"):
        make("Isaac-Cartpole-v0", num_envs=2, device="tpu:0")
    with pytest.raises(FleetlabError, match="GPU"):
        make("Isaac-Cartpole-v0", num_envs=2, device="cuda:0")


def test_warp_compiles_the_step_modules_before_the_first_step():
    """load_physics compiles (or loads from Warp's cache) the MuJoCo Warp modules every step uses, on all cores,
    instead of leaving them to the first step's one-after-another loads. In a fresh process: this one has run
    Warp steps already."""
    code = """
import sys, warp
from fleetlab.sim.mjx import WARP_STEP_MODULES, load_physics
from fleetlab.tasks.cartpole.cfg import XML
assert not any(warp.get_module(name).execs for name in WARP_STEP_MODULES), "loaded before load_physics"
load_physics(XML, sim_dt=0.01, decimation=1, impl="warp")
missing = [name for name in WARP_STEP_MODULES if not (warp.get_module(name).kernels and warp.get_module(name).execs)]
print("not loaded:", missing)
sys.exit(1 if missing else 0)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
