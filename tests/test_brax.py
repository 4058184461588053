"""--library brax: the torch export gives Brax's actions, and (with real processes on CPU, under the JAX launcher
and gloo collectives) 2 processes train identical parameters that balance the pole, 2 localhost "nodes" train
one run, and kill -9 of a worker restarts the group, which resumes from the last checkpoint."""

import glob
import json
import os
import pickle
import re
import signal
import time
import types

import numpy as np
import pytest
from conftest import PYTHON, free_port, run_cmd
from test_launch import Launch, no_leftover_workers, worker_pids  # noqa: F401  (the fixture ends leftover workers)

SMALL = ["--device", "cpu"]


@pytest.mark.parametrize("distribution", ["normal", "tanh_normal"])
def test_exported_policy_gives_brax_actions(tmp_path, distribution):
    """policy.pt (TorchScript) and policy.onnx rebuild Brax's deterministic policy, normalizer included (the ONNX
    model run by onnx's own reference evaluator: onnxruntime is not a dependency)."""
    import jax
    import jax.numpy as jnp
    import torch

    from fleetlab.rl.brax import params as brax_params
    from fleetlab.rl.brax.export import export_policy
    from fleetlab.tasks.cartpole.agents import ALL

    cartpole_brax = ALL["brax"]

    cfg = cartpole_brax()
    cfg["network"]["distribution_type"] = distribution
    cfg["ppo"]["normalize_observations"] = True
    env = types.SimpleNamespace(observation_size=4, action_size=1)
    make_policy, (normalizer, policy, value) = brax_params.initial(env, cfg, seed=3)
    rng = np.random.default_rng(0)
    # statistics far from (0, 1): an exporter that skipped the normalizer would give other actions
    normalizer = normalizer.replace(mean=jnp.asarray(rng.normal(size=4), jnp.float32),
                                    std=jnp.asarray(rng.uniform(0.2, 3.0, size=4), jnp.float32))
    params = (normalizer, policy, value)
    obs = rng.normal(size=(32, 4)).astype(np.float32)
    want = np.asarray(make_policy(params, deterministic=True)(jnp.asarray(obs), jax.random.PRNGKey(0))[0])
    paths = export_policy(params, cfg, 4, str(tmp_path))
    got = torch.jit.load(paths[0])(torch.from_numpy(obs)).detach().numpy()
    assert np.abs(want).max() > 1e-3  # the network is not trivially zero
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    import onnx
    from onnx.reference import ReferenceEvaluator

    onnx.checker.check_model(onnx.load(paths[1]))
    (from_onnx,) = ReferenceEvaluator(paths[1]).run(None, {"obs": obs})
    np.testing.assert_allclose(from_onnx, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fmt", ["pickle", "pt"])
def test_checkpoints_read_back_into_the_params_they_saved(tmp_path, fmt):
    """A checkpoint (model_<it>.pickle since 2026-12-06; the torch model_<it>.pt files of before, tensors of the
    same trees) goes through the reader every play and resume uses, into fresh params of the run's config: every
    leaf comes back, the normalizer's statistics included."""
    import jax
    import jax.numpy as jnp
    import torch
    from flax import serialization

    from fleetlab.rl.brax import params as brax_params
    from fleetlab.rl.checkpoint_reader import read_checkpoint
    from fleetlab.tasks.cartpole.agents import ALL

    cartpole_brax = ALL["brax"]

    cfg = cartpole_brax()
    env = types.SimpleNamespace(observation_size=4, action_size=1)
    _, (normalizer, policy, value) = brax_params.initial(env, cfg, seed=3)
    normalizer = normalizer.replace(mean=jnp.arange(4, dtype=jnp.float32), std=jnp.full(4, 2.5, jnp.float32))
    saved = (normalizer, policy, value)
    path = tmp_path / f"model_7.{fmt}"
    checkpoint = brax_params.to_checkpoint(saved, cfg, 7, "Isaac-Cartpole-v0", 7 * 64)
    if fmt == "pickle":
        path.write_bytes(pickle.dumps(checkpoint))
    else:  # the torch format of before: the same trees as CPU tensors
        trees = {name: jax.tree.map(lambda x: torch.from_numpy(np.array(x)), serialization.to_state_dict(tree))
                 for name, tree in zip(("normalizer", "policy", "value"), saved)}
        torch.save({**checkpoint, "brax_params": trees}, path)
    _, template = brax_params.initial(env, cfg, seed=4)  # other fresh params: the checkpoint must overwrite them
    restored = brax_params.from_checkpoint(template, read_checkpoint(str(path)), str(path))
    assert jax.tree.structure(restored) == jax.tree.structure(saved)
    for got, want in zip(jax.tree.leaves(restored), jax.tree.leaves(saved)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_device_put_replicated_shim_feeds_pmap_and_is_removed_after():
    """brax 0.14.2 calls jax.device_put_replicated, which jax >= 0.10 removed: patches.installed() supplies it,
    with the layout pmap takes, only while a session trains."""
    import jax

    from fleetlab.rl.brax import patches

    had = hasattr(jax, "device_put_replicated")
    devices = jax.local_devices()
    with patches.installed():
        out = jax.device_put_replicated({"a": np.arange(3.0)}, devices)
        doubled = jax.pmap(lambda x: x * 2)(out["a"])
    assert out["a"].shape == (len(devices), 3)
    np.testing.assert_array_equal(np.asarray(doubled), np.tile(np.arange(3.0) * 2, (len(devices), 1)))
    assert hasattr(jax, "device_put_replicated") == had  # scoped: nothing left behind


def test_episode_stats_are_summed_once_per_rollout():
    """VmapOnly hands the sink the statistics summed over every env (psum over Brax's pmap axis) once every
    `report_every` steps, and zeroes them; in between the sink is not called."""
    import jax
    import jax.numpy as jnp
    from brax.envs.base import State

    from fleetlab.rl.brax.env import VmapOnly

    class Counting:  # each step ends one episode of return 2 in every env
        observation_size, action_size, backend = 1, 1, "mjx"

        def reset(self, rng, spread=None):  # BraxEnv.reset: spread places the env on the terrain
            return State(pipeline_state=None, obs=jnp.zeros(1), reward=jnp.zeros(()), done=jnp.zeros(()),
                         metrics={"steps": jnp.zeros((), jnp.int32), "episode_stats": jnp.zeros(2)}, info={})

        def step(self, state, action):
            metrics = {"steps": state.metrics["steps"] + 1,
                       "episode_stats": state.metrics["episode_stats"] + jnp.array([1.0, 2.0])}
            return state.replace(metrics=metrics)

    reports = []
    env = VmapOnly(Counting(), report_every=4, sink=lambda totals: reports.append(np.asarray(totals)))
    num_envs = 8
    state = jax.pmap(env.reset, axis_name="i")(jax.random.split(jax.random.PRNGKey(0), num_envs)[None])
    step = jax.pmap(env.step, axis_name="i")
    for _ in range(10):
        state = step(state, jnp.zeros((1, num_envs, 1)))
    jax.effects_barrier()
    assert len(reports) == 2  # after steps 4 and 8
    for totals in reports:
        np.testing.assert_allclose(totals, [4 * num_envs, 8 * num_envs])
    np.testing.assert_allclose(np.asarray(state.metrics["episode_stats"]).sum((0, 1)), [2 * num_envs, 4 * num_envs])


def test_epoch_length_divides_the_iterations():
    from fleetlab.rl.brax.session import epoch_length

    assert epoch_length(150, 10) == 10
    assert epoch_length(125, 10) == 5
    assert epoch_length(7, 10) == 7
    assert epoch_length(13, 10) == 1


def test_training_never_imports_torch(tmp_path):
    """Brax trains without torch, and its checkpoints and TensorBoard events need none. torch's import anywhere on
    the brax path (~3 s on a GPU host) would come before the first epoch, or, on a thread beside training, hold the
    GIL that MuJoCo Warp's callbacks inside the running XLA program wait for (~1.3 s on a 45 s Humanoid run). Python's
    garbage collector is off through the start-up and the trace (rl/garbage_collection.py), and on again after,
    with the start-up's objects frozen. The checkpoint holds plain values only: the reader of JAX pickles, which
    resolves no Python global, reads it back into the run's parameters."""
    from fleetlab.rl.checkpoint_reader import read_checkpoint

    out = run_cmd([PYTHON, os.path.join(os.path.dirname(__file__), "mp", "watch_imports.py"), "train",
                   "--library", "brax", "--num_envs", "16", "--max_iterations", "4", "agent.log_interval=2", *SMALL],
                  cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "first torch import: none", out.stdout[-2000:]
    collector = [line for line in lines if line.startswith("collector on at")]
    assert collector == ["collector on at the import of mujoco: False",
                         "collector on at the import of brax.training.agents.ppo.train: False"], out.stdout[-2000:]
    after = re.fullmatch(r"collector on after: True, objects frozen: (\d+)", lines[-2])
    assert after and int(after.group(1)) > 10_000, lines[-2]  # jax and brax alone are ~100k objects
    run_dir = _run_dir(tmp_path)
    checkpoint = read_checkpoint(os.path.join(run_dir, "model_4.pickle"))
    assert checkpoint["iteration"] == 4 and checkpoint["env_steps"] == 4 * 16 * 16, checkpoint  # 16 steps per env
    checksum = re.search(r"parameter checksum (\w+)", out.stdout).group(1)
    assert _checksum_of(checkpoint) == checksum
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))[0])
    events.Reload()
    assert [e.step for e in events.Scalars("Train/mean_reward")] == [2, 4]
    assert all(e.value > 0 for e in events.Scalars("Perf/total_fps"))


def _checksum_of(checkpoint) -> str:
    """The parameter checksum of a checkpoint's (normalizer, policy, value), as the session computes it: the
    normalizer is read back into Brax's running-statistics state, whose leaves come in its fields' order."""
    import jax
    from brax.training.acme import running_statistics, specs
    from flax import serialization

    from fleetlab.distributed import parameter_checksum

    normalizer, policy, value = (serialization.msgpack_restore(checkpoint["brax_params"][name])
                                 for name in ("normalizer", "policy", "value"))
    template = running_statistics.init_state(specs.Array(np.shape(normalizer["mean"]), np.dtype("float32")))
    trees = (serialization.from_state_dict(template, normalizer), policy, value)
    return parameter_checksum([np.asarray(x) for x in jax.tree.leaves(trees)])


def _run_dir(root):
    runs = sorted(glob.glob(os.path.join(root, "logs", "brax", "cartpole", "*")))
    return runs[-1] if runs else None


@pytest.mark.slow
def test_a_warp_buffer_overflow_in_the_fused_rollout_is_a_one_line_error(tmp_path):
    """Brax never calls VecEnv.step, whose check catches MuJoCo Warp's buffer overflows; the per-rollout statistics
    carry the overflow instead, and training stops with the same one-line error. An Ant on 4 feet needs 4 contacts."""
    out = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", "brax", "--task", "Isaac-Ant-v0", "--num_envs", "4",
                   "--max_iterations", "2", "--device", "cpu", "--headless", "--physics_impl", "warp",
                   "env.physics.contacts_per_env=1"], cwd=tmp_path, env_extra={"JAX_PLATFORMS": "cpu"})
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("fleetlab: error: MuJoCo Warp ran out of its contact or constraint buffers during the"), last
    assert "--physics_constraints_per_env" in last


@pytest.mark.slow
def test_two_processes_train_identical_params_that_balance(tmp_path):
    launch = Launch(["--nproc_per_node", "2", "--", "train", "--library", "brax", "--num_envs", "128",
                     "--max_iterations", "150", *SMALL], str(tmp_path))
    code, out = launch.finish(900)
    assert code == 0, out[-3000:]
    summary = json.load(open(os.path.join(_run_dir(tmp_path), "summary.json")))
    assert summary["world_size"] == 2 and summary["checksums_identical"], summary
    final = summary["final"]
    assert final["compiles_after_first_epoch"] == 0  # one compiled program for every later epoch
    # where the time went: learn() began before the first epoch ended, the epochs ended in order, compiles took time
    assert 0 < final["learn_start_s"] < final["epoch_end_s"][0] and final["epoch_end_s"] == sorted(final["epoch_end_s"])
    assert final["xla_compile_s"] > 0 and final["jax_trace_s"] > 0, final
    assert 0 < final["Train/mean_episode_length_last_iteration"] <= 300, final  # Cartpole's episodes: 300 steps
    # every rank reports a training FPS (Brax hands its training/sps to process 0 only), so the run's sum exists
    fps = [r["perf"]["train_fps"] for r in summary["ranks"]]
    assert all(f and f > 0 for f in fps) and summary["perf"]["train_fps"] == pytest.approx(sum(fps)), fps
    assert max(fps) / min(fps) < 3, fps  # both ranks time the same lockstep epochs
    play = run_cmd([PYTHON, "-m", "fleetlab", "play", "--library", "brax", "--num_envs", "16", "--steps", "1000",
                    *SMALL], str(tmp_path), timeout=600)
    assert play.returncode == 0, play.stdout[-2000:] + play.stderr[-2000:]
    result = json.load(open(os.path.join(_run_dir(tmp_path), "play.json")))
    assert result["success_name"] == "|pole| < 0.2 rad" and result["success_fraction"] >= 0.95, result


@pytest.mark.slow
def test_two_localhost_nodes(tmp_path):
    port = free_port()
    nodes = [Launch(["--nnodes", "2", "--node_rank", str(r), "--nproc_per_node", "1", "--coordinator_address",
                     f"127.0.0.1:{port}", "--rdzv_id", "job42", "--", "train", "--library", "brax", "--num_envs", "64",
                     "--max_iterations", "10", *SMALL], str(tmp_path)) for r in range(2)]
    codes, outs = zip(*(n.finish(600) for n in nodes))
    assert codes == (0, 0), [o[-2000:] for o in outs]
    summary = json.load(open(os.path.join(tmp_path, "logs", "brax", "cartpole", "job42", "summary.json")))
    assert summary["world_size"] == 2 and summary["checksums_identical"], summary
    assert sorted(r["node_rank"] for r in summary["ranks"]) == [0, 1], summary["ranks"]


@pytest.mark.slow
def test_kill_9_restarts_and_resumes_to_the_end(tmp_path):
    """`fleetlab launch --max_restarts 1`: SIGKILL of rank 1 mid-run ends the group, the launcher starts it again, and
    rank 0 resumes from a checkpoint no older than the last one written before the kill, then trains to the end."""
    launch = Launch(["--nproc_per_node", "2", "--max_restarts", "1", "--", "train", "--library", "brax",
                     "--num_envs", "64", "--max_iterations", "40", "agent.save_interval=10", *SMALL], str(tmp_path))
    deadline = time.time() + 400
    while not (_run_dir(tmp_path) and glob.glob(os.path.join(_run_dir(tmp_path), "model_*.pickle"))):
        assert launch.proc.poll() is None and time.time() < deadline, launch.out[-3000:]
        time.sleep(0.1)
    run_dir = _run_dir(tmp_path)
    seen = max(int(re.search(r"model_(\d+)", p).group(1)) for p in glob.glob(os.path.join(run_dir, "model_*.pickle")))
    assert seen < 40, "the run ended before the kill: make it longer"
    os.kill(worker_pids(launch.proc.pid)[1], signal.SIGKILL)
    code, out = launch.finish(600)
    assert code == 0, out[-3000:]
    assert "restart 1/1" in out, out[-3000:]
    resumed = re.search(r"resuming from \S+model_(\d+)\.pickle at iteration (\d+)/40", out)
    assert resumed and int(resumed.group(1)) >= seen, out[-3000:]
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    assert summary["world_size"] == 2 and summary["checksums_identical"], summary
    assert os.path.isfile(os.path.join(run_dir, "model_40.pickle"))
