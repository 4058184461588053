"""Atomic checkpoint files, the latest complete checkpoint, RNG state round trips, and the NaN-action error."""

import os
import random

import numpy as np
import pytest
import torch

from fleetlab.distributed import RunContext
from fleetlab.errors import FleetlabError
from fleetlab.rl import fault_tolerance as ft


class Unpicklable:
    def __reduce__(self):
        raise RuntimeError("dies mid-write")


def test_a_failed_write_leaves_the_previous_checkpoint_and_no_partial_file(tmp_path):
    path = tmp_path / "model_1.pt"
    ft.atomic_torch_save({"w": torch.ones(3)}, path)
    with pytest.raises(RuntimeError, match="dies mid-write"):
        ft.atomic_torch_save({"w": torch.zeros(1000), "bad": Unpicklable()}, path)
    assert torch.equal(torch.load(path)["w"], torch.ones(3))  # the old file is intact
    assert os.listdir(tmp_path) == ["model_1.pt"]  # no temporary file left behind


def test_skrl_checkpoints_appear_only_once_complete(tmp_path):
    """skrl's write_checkpoint writes straight to <experiment_dir>/checkpoints/<name> (torch.save, or pickle into
    open(path, "wb")): FleetAgentMixin points it at a staging folder and renames each file into place."""
    from fleetlab.rl.skrl.agent import FleetAgentMixin, TrainingState

    final = tmp_path / "checkpoints"
    seen_while_writing = []

    class UpstreamAgent:  # skrl's Agent.write_checkpoint, reduced to what it does with the file system
        experiment_dir = str(tmp_path)

        def write_checkpoint(self, *, timestep, timesteps):
            with open(os.path.join(self.experiment_dir, "checkpoints", f"agent_{timestep}.pt"), "wb") as f:
                f.write(b"first half")
                seen_while_writing.append(sorted(os.listdir(final)))
                f.write(b", second half")

    class Agent(FleetAgentMixin, UpstreamAgent):
        pass

    agent = Agent()
    agent.fleet = TrainingState(ctx=RunContext(), env=None, task_id="Fleet-Cartpole-v0", offset=0, total=32,
                                rollouts=16, interval=16, rng_extra=dict, state_checksum=lambda: "0123abcd")
    final.mkdir()
    agent.write_checkpoint(timestep=16, timesteps=32)
    assert seen_while_writing == [[".writing"]], "nothing under the final name while upstream writes"
    assert (final / "agent_16.pt").read_bytes() == b"first half, second half"
    side = torch.load(final / "fleetlab_16.pt", weights_only=True)
    assert side["task"] == "Fleet-Cartpole-v0" and side["fleetlab_state_checksum"] == "0123abcd"
    assert agent.experiment_dir == str(tmp_path) and os.listdir(final / ".writing" / "checkpoints") == []


def test_latest_checkpoint_is_the_last_completed_and_ignores_temporary_files(tmp_path):
    for name in ("model_5.pt", "model_10.pt"):
        ft.atomic_torch_save({}, tmp_path / name)
    (tmp_path / "model_15.pt.abc.tmp").write_bytes(b"half")
    os.utime(tmp_path / "model_5.pt", (1, 1))
    assert os.path.basename(ft.latest_checkpoint(str(tmp_path), r"model_\d+\.pt")) == "model_10.pt"
    assert ft.latest_checkpoint(str(tmp_path / "none"), r"model_\d+\.pt") is None


def test_rng_state_round_trip_replays_the_same_draws(tmp_path):
    from fleetlab.envs import make

    env = make("Isaac-Cartpole-v0", num_envs=4, device="cpu", seed=0)
    key = np.asarray(env.state.key)
    ft.atomic_torch_save({"fleetlab_rng": [ft.rng_state(env)]}, tmp_path / "rng.pt")
    draws = (random.random(), np.random.rand(), torch.rand(1).item())
    env.state = type(env.state)(**{**env.state.__dict__, "key": env.state.key + 1})
    # tensors and plain values only: the state loads without unpickling arbitrary objects
    state = torch.load(tmp_path / "rng.pt", weights_only=True)["fleetlab_rng"][0]
    ft.set_rng_state(state, env)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == draws
    assert np.array_equal(np.asarray(env.state.key), key) and env.state.key.dtype == key.dtype
    ctx = RunContext()
    assert ft.restore_rng(ctx, [state], env) and not ft.restore_rng(ctx, [state, state], env)  # world size differs


def test_nan_actions_are_a_clear_error():
    from fleetlab.envs import make

    env = make("Isaac-Cartpole-v0", num_envs=4, device="cpu", seed=0)
    env.step(torch.zeros(4, 1))
    with pytest.raises(FleetlabError, match="non-finite .*actions"):
        env.step(torch.full((4, 1), float("nan")))


def test_non_finite_physics_is_a_clear_error():
    """Finite actions, but a state that blows up: the env's own check (which replaces rsl_rl's per-step
    check_nan in our runner) names the physics."""
    import jax.numpy as jnp

    from fleetlab.envs import make

    env = make("Isaac-Cartpole-v0", num_envs=4)
    env.state = env.state.replace(qvel=env.state.qvel.at[1, 1].set(jnp.inf))
    with pytest.raises(FleetlabError, match="non-finite .* observations or rewards .* physics"):
        env.step(torch.zeros(4, 1))


def test_gpu_checks_only_every_nth_step(monkeypatch):
    from fleetlab.envs import make

    env = make("Isaac-Cartpole-v0", num_envs=2)
    calls = []
    monkeypatch.setattr(env, "device", "cuda:0")  # the sampling rule only; the arrays stay on the CPU
    for _ in range(2 * env.NAN_CHECK_EVERY):
        env._check_finite(lambda: calls.append(1) or (True, True, 0))
    assert len(calls) == 2


def test_jax_view_checks_too():
    import jax.numpy as jnp

    from fleetlab.envs import make

    env = make("Isaac-Cartpole-v0", num_envs=4)
    env.step_jax(jnp.zeros((4, 1)))
    with pytest.raises(FleetlabError, match="non-finite .*actions"):
        env.step_jax(jnp.full((4, 1), jnp.nan))
