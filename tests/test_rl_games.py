"""rl_games workflow: the distributed fixes, each proven with real torchrun/gloo processes, and training that
balances."""

import glob
import json
import os

import numpy as np
import pytest
from conftest import PYTHON, REPO, free_port, only_run_dir, run_cmd, torchrun

TRAIN = os.path.join(REPO, "scripts", "reinforcement_learning", "rl_games", "train.py")
PLAY = os.path.join(REPO, "scripts", "reinforcement_learning", "rl_games", "play.py")


def _summary(tmp_path):
    with open(os.path.join(only_run_dir(tmp_path, "rl_games", "cartpole"), "summary.json")) as f:
        return json.load(f)


def test_normalizer_sync_fix(tmp_path):
    """Upstream normalizers (rl_games and skrl) end with different statistics on each rank; ours end identical
    and equal to the statistics of both ranks' data together."""
    proc = torchrun(2, [os.path.join(REPO, "tests", "mp", "normalizers.py")], cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = []
    for path in sorted(glob.glob(str(tmp_path / "norm_*.json"))):
        with open(path) as f:
            ranks.append(json.load(f))
    assert len(ranks) == 2
    pooled = np.concatenate([np.asarray(r["data"]) for r in ranks])
    for lib in ("rl_games", "skrl"):
        up0, up1 = ranks[0][f"{lib}_upstream"], ranks[1][f"{lib}_upstream"]
        assert not np.allclose(up0["mean"], up1["mean"]), f"{lib}: the gap (unsynced statistics) is real"
        ours0, ours1 = ranks[0][f"{lib}_synced"], ranks[1][f"{lib}_synced"]
        assert ours0 == ours1, f"{lib}: synced statistics are identical on every rank"
        # the running stats start from mean 0 / var 1 with count ~1e-4..1: compare to the pooled data loosely
        np.testing.assert_allclose(ours0["mean"], pooled.mean(0), rtol=1e-2, atol=1e-2)
        np.testing.assert_allclose(ours0["var"], pooled.var(0), rtol=2e-2)


def test_torch_compile_off_on_cpu_and_minibatch_fits_few_envs(tmp_path):
    from fleetlab.distributed import RunContext
    from fleetlab.envs import make
    from fleetlab.rl.args import parse
    from fleetlab.rl.rl_games.session import RlGamesSession
    from fleetlab.rl.run import resolve_run

    run = resolve_run("rl_games", parse("rl_games", argv=["--max_iterations", "3"]), play=False)
    ctx, env = RunContext(device="cpu", seed=5), make("Isaac-Cartpole-v0", num_envs=64)
    run.library.finalize(run, ctx, env, str(tmp_path / "run"))
    session = RlGamesSession(run, ctx, env)
    conf = session.agent.config
    assert conf["torch_compile"] is False
    assert conf["minibatch_size"] == 64 * 16 and conf["max_epochs"] == 3 and conf["device"] == "cpu"
    conf["device"] = "cuda:0"  # what upstream's multi_gpu branch does
    assert conf["device"] == "cpu", "the pinned config keeps RunContext's device"
    assert session.agent.vec_env.env is env, "rl_games got our env through its config, not its global registry"


@pytest.mark.slow
def test_torchrun_two_processes_standard_schedule_and_normalizers(tmp_path):
    """gloo on CPU, schedule_type=standard with the adaptive LR, obs+value normalizers on: identical weights.
    Upstream all-reduces the KL before its scheduler (both schedule types), so every rank computes the same LR and
    no fix is needed there (fleetlab's former `update_lr` override changed no result and was removed)."""
    proc = torchrun(2, [TRAIN, "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=128",
                        "--max_iterations=6", "agent.params.config.schedule_type=standard",
                        "agent.params.config.normalize_input=True", "agent.params.config.normalize_value=True"],
                    cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(tmp_path)
    assert summary["world_size"] == 2
    assert len({r["checksum"] for r in summary["ranks"]}) == 1, summary["ranks"]
    assert sorted(r["seed"] for r in summary["ranks"]) == [42, 43], "seed = base + global rank"
    run_dir = only_run_dir(tmp_path, "rl_games", "cartpole")
    assert glob.glob(os.path.join(run_dir, "nn", "*.pth")), "rank 0 saved checkpoints"


@pytest.mark.slow
def test_two_localhost_nodes(tmp_path):
    import subprocess

    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    nodes = [
        subprocess.Popen([PYTHON, "-m", "torch.distributed.run", "--nnodes=2", f"--node_rank={rank}",
                          "--nproc_per_node=1", "--rdzv_id=7", "--rdzv_backend=c10d",
                          f"--rdzv_endpoint=localhost:{port}",
                          TRAIN, "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=64",
                          "--max_iterations=3"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for rank in (0, 1)
    ]
    for p in nodes:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    summary = _summary(tmp_path)
    assert summary["world_size"] == 2 and sorted(r["node_rank"] for r in summary["ranks"]) == [0, 1]
    assert len({r["checksum"] for r in summary["ranks"]}) == 1


@pytest.mark.slow
def test_torchrun_train_then_play_balances(tmp_path):
    proc = torchrun(2, [TRAIN, "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=1024"],
                    cwd=tmp_path, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = _summary(tmp_path)
    assert len({r["checksum"] for r in summary["ranks"]}) == 1
    play = run_cmd([PYTHON, PLAY, "--task=Isaac-Cartpole-v0", "--headless", "--device=cpu", "--num_envs=16"],
                   cwd=tmp_path, timeout=600)
    assert play.returncode == 0, play.stderr[-3000:]
    with open(os.path.join(only_run_dir(tmp_path, "rl_games", "cartpole"), "play.json")) as f:
        result = json.load(f)
    assert result["success_fraction"] >= 0.95, result
