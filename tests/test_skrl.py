"""skrl workflows: torch under torchrun/gloo, JAX under jax.distributed; the fixes, and training that balances."""

import json
import os
import subprocess

import pytest
from conftest import PYTHON, REPO, free_port, only_run_dir, run_cmd, torchrun

TRAIN = os.path.join(REPO, "scripts", "reinforcement_learning", "skrl", "train.py")
PLAY = os.path.join(REPO, "scripts", "reinforcement_learning", "skrl", "play.py")
TASK = ["--task=Isaac-Cartpole-v0", "--headless"]


def _summary(tmp_path):
    with open(os.path.join(only_run_dir(tmp_path, "skrl", "cartpole"), "summary.json")) as f:
        return json.load(f)


def _jax_launch(module, nproc, args, cwd, extra=(), timeout=900):
    cmd = [PYTHON, "-m", module, "--nnodes=1", f"--nproc_per_node={nproc}",
           f"--coordinator_address=127.0.0.1:{free_port()}", *extra, TRAIN, *args]
    return run_cmd(cmd, cwd, timeout)


def test_jax_env_wrapper_hands_jax_arrays_with_n_by_1_rewards():
    import jax

    from fleetlab.envs import make
    from fleetlab.rl.skrl.jax_backend import SkrlJaxEnv

    env = SkrlJaxEnv(make("Isaac-Cartpole-v0", num_envs=5))
    obs, _ = env.reset()
    assert isinstance(obs, jax.Array) and obs.shape == (5, 4)
    obs, reward, terminated, truncated, _ = env.step(jax.numpy.zeros((5, 1)))
    assert all(isinstance(x, jax.Array) for x in (obs, reward, terminated, truncated)), "no torch hop"
    assert reward.shape == terminated.shape == truncated.shape == (5, 1)


def test_torch_env_wrapper_shapes():
    import torch

    from fleetlab.envs import make
    from fleetlab.rl.skrl.torch_backend import SkrlTorchEnv

    env = SkrlTorchEnv(make("Isaac-Cartpole-v0", num_envs=3))
    env.reset()
    _, reward, terminated, truncated, _ = env.step(torch.zeros(3, 1))
    assert reward.shape == terminated.shape == truncated.shape == (3, 1)


def test_torch_env_wrapper_passes_skrl_only_finite_episode_terms():
    """skrl averages each log entry with np.mean; a NaN (no episode ended at that step) must not reach it."""
    import math

    import torch

    from fleetlab.envs import make
    from fleetlab.rl.skrl.torch_backend import SkrlTorchEnv

    vec = make("Isaac-Cartpole-v0", num_envs=4)
    env = SkrlTorchEnv(vec)
    env.reset()
    log = env.step(torch.zeros(4, 1))[4]["log"]
    assert "Episode_Reward/alive" not in log, "no episode ended: the NaN term is left out"
    assert log["Episode_Termination/time_out"].item() == 0.0
    vec.episode_length_buf = torch.full((4,), vec.max_episode_length - 1)
    log = env.step(torch.zeros(4, 1))[4]["log"]
    assert all(math.isfinite(v.item()) and v.device.type == "cpu" for v in log.values())
    assert log["Episode_Reward/alive"].item() > 0 and log["Episode_Termination/time_out"].item() == 4.0


def test_our_jax_launcher_exits_non_zero_when_children_crash(tmp_path):
    bad = ["--task=Isaac-Nope-v0", "--distributed", "--ml_framework", "jax"]
    upstream = _jax_launch("skrl.utils.distributed.jax", 2, bad, tmp_path, timeout=300)
    assert upstream.returncode == 0, "the upstream gap: skrl's launcher reports success"
    ours = _jax_launch("fleetlab.distributed.jax_launch", 2, bad, tmp_path, timeout=300)
    assert ours.returncode == 2 and "unknown task" in ours.stderr


@pytest.mark.slow
def test_torchrun_two_processes(tmp_path):
    proc = torchrun(2, [TRAIN, *TASK, "--distributed", "--num_envs=128", "--max_iterations=4"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(tmp_path)
    assert summary["world_size"] == 2 and summary["library"] == "skrl-torch"
    # the default config normalizes observations and values: identical weights AND statistics need the sync fix
    assert len({r["checksum"] for r in summary["ranks"]}) == 1, summary["ranks"]
    assert len({r["seed"] for r in summary["ranks"]}) == 2


@pytest.mark.slow
def test_jax_launcher_two_processes_with_cached_pmaps(tmp_path):
    compiles = {}
    for iterations in (2, 4):  # the first two updates compile a few one-off functions; after that nothing new
        work = tmp_path / f"it{iterations}"
        work.mkdir()
        args = [*TASK, "--distributed", "--ml_framework", "jax", "--num_envs=128", f"--max_iterations={iterations}"]
        proc = _jax_launch("skrl.utils.distributed.jax", 2, args, work)
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = _summary(work)
        assert summary["world_size"] == 2 and summary["library"] == "skrl-jax"
        assert len({r["checksum"] for r in summary["ranks"]}) == 1, summary["ranks"]
        compiles[iterations] = summary["final"]["jax_backend_compiles"]
    # each iteration all-reduces gradients 8 x 8 times and the KL 8 times; upstream compiles a new pmap for each,
    # so its count grows with the iterations. With the cached pmaps it does not grow at all.
    assert compiles[4] == compiles[2], compiles


@pytest.mark.slow
def test_two_localhost_nodes_torch_and_jax(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    port = free_port()
    torch_nodes = [[PYTHON, "-m", "torch.distributed.run", "--nnodes=2", f"--node_rank={r}", "--nproc_per_node=1",
                    "--rdzv_id=9", "--rdzv_backend=c10d", f"--rdzv_endpoint=localhost:{port}", TRAIN, *TASK,
                    "--distributed", "--num_envs=64", "--max_iterations=2"] for r in (0, 1)]
    port = free_port()
    jax_nodes = [[PYTHON, "-m", "fleetlab.distributed.jax_launch", "--nnodes=2", f"--node_rank={r}",
                  "--nproc_per_node=1", f"--coordinator_address=127.0.0.1:{port}", TRAIN, *TASK, "--distributed",
                  "--ml_framework", "jax", "--num_envs=64", "--max_iterations=2"] for r in (0, 1)]
    for name, cmds in (("torch", torch_nodes), ("jax", jax_nodes)):
        work = tmp_path / name
        work.mkdir()
        procs = [subprocess.Popen(c, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for c in cmds]
        for p in procs:
            _, err = p.communicate(timeout=900)
            assert p.returncode == 0, f"{name}: {err[-3000:]}"
        summary = _summary(work)
        assert summary["world_size"] == 2
        assert len({r["checksum"] for r in summary["ranks"]}) == 1, (name, summary["ranks"])


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_seed_commands_with_two_processes_train_a_balancing_policy(tmp_path, framework):
    """The acceptance commands of the issue (2 processes, 512 envs each on CPU), then play."""
    args = [*TASK, "--distributed", "--num_envs=512"]
    if framework == "torch":
        train = torchrun(2, [TRAIN, *args], cwd=tmp_path, timeout=1500)
    else:
        train = _jax_launch("skrl.utils.distributed.jax", 2, [*args, "--ml_framework", "jax"], tmp_path, timeout=1500)
    assert train.returncode == 0, train.stderr[-3000:]
    assert len({r["checksum"] for r in _summary(tmp_path)["ranks"]}) == 1
    play = run_cmd([PYTHON, PLAY, *TASK, "--device=cpu", "--num_envs=16", "--ml_framework", framework], cwd=tmp_path,
                   timeout=600)
    assert play.returncode == 0, play.stderr[-3000:]
    with open(os.path.join(only_run_dir(tmp_path, "skrl", "cartpole"), "play.json")) as f:
        result = json.load(f)
    assert result["success_fraction"] >= 0.95, result
