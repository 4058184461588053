"""fleetlab bench: the pure-torch baseline env, the efficiency/markdown/plot pieces, and one real bench run."""

import json
import math
import os

import pytest
import torch

from fleetlab.bench.torch_cartpole import TorchCartpole
from fleetlab.bench.train import add_efficiency, bench_train, markdown


def test_torch_cartpole_matches_the_mjx_task_closely():
    """Same masses, damping and timing: a short passive fall from the same state ends near the MJX one."""
    import jax.numpy as jnp
    import numpy as np

    from fleetlab.envs import make

    mjx_env = make("Isaac-Cartpole-v0", num_envs=1)
    mjx_env.state = mjx_env.state.replace(qpos=jnp.asarray([[0.0, 0.1]]), qvel=jnp.zeros((1, 2)))
    base = TorchCartpole(1)
    base.q, base.v = torch.tensor([[0.0, 0.1]]), torch.zeros(1, 2)
    for _ in range(20):
        mjx_env.step(torch.zeros(1, 1))
        base.step(torch.zeros(1, 1))
    np.testing.assert_allclose(base.q.numpy(), np.asarray(mjx_env.state.qpos), atol=0.03)
    assert abs(float(base.q[0, 1])) > 0.15, "the pole falls"


def test_torch_cartpole_time_out_and_termination():
    env = TorchCartpole(3)
    env.episode_length_buf = torch.tensor([299, 0, 0])
    env.q[2, 0] = 3.5
    _, reward, terminated, truncated, extras = env.step(torch.zeros(3, 1))
    assert truncated.tolist() == [True, False, False] and terminated.tolist() == [False, False, True]
    assert env.episode_length_buf.tolist() == [0, 1, 0]
    assert reward[2] < 0 < reward[1]


def test_efficiency_and_markdown():
    rows = [
        {"library": "rsl_rl", "physics_impl": "jax", "num_envs": 8, "nproc": 1, "train_fps": 100.0, "env_fps": 1e6,
         "rc": 0},
        {"library": "rsl_rl", "physics_impl": "jax", "num_envs": 8, "nproc": 2, "train_fps": 190.0, "env_fps": 2e6,
         "rc": 0},
        {"library": "rsl_rl", "physics_impl": "warp", "num_envs": 8, "nproc": 1, "train_fps": 300.0, "rc": 0},
        {"library": "rsl_rl", "physics_impl": "warp", "num_envs": 8, "nproc": 2, "train_fps": 540.0, "rc": 0},
        {"library": "skrl", "physics_impl": "jax", "num_envs": 8, "nproc": 2, "rc": 1},
    ]
    add_efficiency(rows)
    assert rows[0]["weak_scaling_efficiency"] == 1.0
    assert math.isclose(rows[1]["weak_scaling_efficiency"], 0.95)
    assert math.isclose(rows[3]["weak_scaling_efficiency"], 0.9)  # against the one-process run of the same physics
    table = markdown(rows)
    assert "| rsl_rl | jax | 8 | 2 | 2.00M |" in table and "0.95" in table and "failed (rc 1)" in table


@pytest.mark.slow
def test_bench_train_runs_real_processes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = bench_train(["rsl_rl"], "Isaac-Cartpole-v0", [64], [1, 2], iterations=2, device="cpu",
                       out_dir=str(tmp_path / "out"), baseline=True)
    assert [r["rc"] for r in rows] == [0, 0, 0], [r.get("error") for r in rows]
    two = rows[2]
    assert two["nproc"] == 2 and two["checksums_identical"] and two["train_fps"] > 0 and two["env_fps"] > 0
    assert "weak_scaling_efficiency" in two and "vs_torch_baseline" in rows[1]
    for name in ("bench_train.json", "bench_train.md", "bench_train.png"):
        assert os.path.getsize(tmp_path / "out" / name) > 0
    with open(tmp_path / "out" / "bench_train.json") as f:
        assert len(json.load(f)["rows"]) == 3


@pytest.mark.slow
def test_bench_train_on_ant_has_no_cartpole_baseline(tmp_path):
    from conftest import PYTHON, run_cmd

    out = tmp_path / "out"
    proc = run_cmd([PYTHON, "-m", "fleetlab", "bench", "train", "--task", "Isaac-Ant-v0", "--libraries", "rsl_rl",
                    "--num_envs", "32", "--iterations", "2", "--device", "cpu", "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "bench_train.json") as f:
        rows = json.load(f)["rows"]
    assert [r["library"] for r in rows] == ["rsl_rl"] and rows[0]["task"] == "Isaac-Ant-v0"
    assert rows[0]["train_fps"] > 0 and rows[0]["jit_s"] > 0
