"""Bring your own task: the example package examples/pendulum, copied to a folder outside the repo, trains with
torchrun (2 processes, gloo) through --import, and under `fleetlab launch` (torch and JAX workers) through the
`fleetlab.tasks` entry point of its own pyproject.toml."""

import json
import os
import shutil

import pytest
from conftest import PYTHON, REPO, run_cmd, torchrun

TRAIN = os.path.join(REPO, "scripts", "reinforcement_learning", "rsl_rl", "train.py")
SMALL = ["--task", "Pendulum-SwingUp-v0", "--num_envs", "32", "--max_iterations", "2", "--device", "cpu"]


def _summary(root) -> dict:
    paths = [os.path.join(d, "summary.json") for d, _, files in os.walk(root) if "summary.json" in files]
    assert len(paths) == 1, paths
    with open(paths[0]) as f:
        return json.load(f)


def _copy_example(tmp_path):
    folder = tmp_path / "my_tasks"  # outside the repo: nothing of the repo's examples/ is importable from here
    shutil.copytree(os.path.join(REPO, "examples", "pendulum"), folder,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    return folder


def test_an_unknown_import_is_a_one_line_error(tmp_path):
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--import", "no_such_tasks", *SMALL], cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "fleetlab: error: --import no_such_tasks: no module named 'no_such_tasks' (install the package, or run from "
        "the folder that holds it, or add that folder to PYTHONPATH)"]


@pytest.mark.slow
def test_a_task_from_the_users_own_package_trains_on_two_processes(tmp_path):
    folder = _copy_example(tmp_path)

    # 1. --import, with torchrun running the Isaac Lab script path; the package lies in the working directory
    proc = torchrun(2, [TRAIN, "--headless", "--distributed", "--import", "fleetlab_pendulum", *SMALL], cwd=folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(folder / "logs")
    assert summary["task"] == "Pendulum-SwingUp-v0" and summary["world_size"] == 2
    assert summary["checksums_identical"] and len({r["checksum"] for r in summary["ranks"]}) == 1

    # 2. the entry point: the package installed (pip --target), no --import, run from elsewhere
    site = tmp_path / "site"
    pip = run_cmd([PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                   "--target", str(site), str(folder)], cwd=tmp_path, timeout=300)
    assert pip.returncode == 0, pip.stderr[-3000:]
    assert (site / "fleetlab_pendulum" / "assets" / "bob.obj").is_file(), "meshes ship as package data"
    assert (site / "fleetlab_pendulum" / "assets" / "grid.png").is_file(), "textures ship as package data"
    path = os.pathsep.join([str(site), os.path.join(REPO, "src")])
    for name, library in (("torch", ["--library", "rsl_rl"]), ("jax", ["--library", "skrl", "--ml_framework", "jax"])):
        work = tmp_path / f"launch_{name}"
        work.mkdir()
        proc = run_cmd([PYTHON, "-m", "fleetlab", "launch", "--nproc_per_node", "2", "--", "train", *library, *SMALL],
                       cwd=work, timeout=600, env_extra={"PYTHONPATH": path})
        assert proc.returncode == 0, f"{name}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        summary = _summary(work / "logs")
        assert summary["task"] == "Pendulum-SwingUp-v0" and summary["world_size"] == 2, name
        assert summary["checksums_identical"], (name, summary["ranks"])


def test_the_example_runs_on_both_physics_implementations(monkeypatch):
    """The example's config (its own terms and the term library's) on MJX's JAX and MuJoCo Warp implementations:
    the same actions from the same start give the same swing, and play's success metric is logged."""
    import numpy as np
    import torch

    from fleetlab.envs import make

    monkeypatch.syspath_prepend(os.path.join(REPO, "examples", "pendulum"))
    import fleetlab_pendulum  # noqa: F401  (registers Pendulum-SwingUp-v0)

    envs = {impl: make("Pendulum-SwingUp-v0", num_envs=4, seed=3, impl=impl) for impl in ("jax", "warp")}
    assert envs["jax"].num_obs == 3 and envs["jax"].num_actions == 1
    actions = torch.linspace(-1, 1, 4)[:, None]
    for _ in range(25):
        out = {impl: env.step(actions) for impl, env in envs.items()}
    np.testing.assert_allclose(out["warp"][0]["policy"].numpy(), out["jax"][0]["policy"].numpy(), atol=1e-3)
    upright = out["jax"][4]["log"]["Metrics/upright"]
    assert 0.0 <= float(upright) <= 1.0
    assert np.asarray(envs["jax"].state.qvel).std() > 0.1, "the motor swings the bob"
