"""rsl_rl workflow: the gloo/CPU runner fix, synced logging, training that balances, torchrun and 2 localhost nodes."""

import glob
import json
import math
import os
import re

import pytest
import torch
from conftest import PYTHON, REPO, free_port, only_run_dir, run_cmd, torchrun

from fleetlab.errors import FleetlabError

TRAIN = os.path.join(REPO, "scripts", "reinforcement_learning", "rsl_rl", "train.py")
PLAY = os.path.join(REPO, "scripts", "reinforcement_learning", "rsl_rl", "play.py")


def test_upstream_runner_cannot_run_distributed_on_cpu(monkeypatch):
    """The gap our runner fixes: upstream demands cuda:LOCAL_RANK and nccl."""
    from rsl_rl.runners import OnPolicyRunner

    from fleetlab.envs import make
    from fleetlab.rl.rsl_rl.env import RslRlVecEnvWrapper
    from fleetlab.tasks.cartpole.agents import rsl_rl as cfg

    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    env = RslRlVecEnvWrapper(make("Isaac-Cartpole-v0", num_envs=2))
    with pytest.raises(ValueError, match="does not match expected device"):
        OnPolicyRunner(env, cfg(), log_dir=None, device="cpu")


def test_synced_logger_averages_all_ranks_and_sums_fps(tmp_path):
    proc = torchrun(2, [os.path.join(REPO, "tests", "mp", "synced_logger.py")], cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {}
    for path in glob.glob(str(tmp_path / "result_*.json")):
        with open(path) as f:
            r = json.load(f)
        results[r["rank"]] = r
    assert set(results) == {0, 1}
    for r in results.values():
        assert r["Train/mean_reward"] == pytest.approx(3.0), "mean over the 3 episodes of both ranks"
        assert r["Episode_Reward/alive"] == pytest.approx(3.0), "nanmean of 2.0 (rank 0) and 4.0 (rank 1)"
        # rank 0: 64 steps / 1.0 s, rank 1: 64 steps / 1.5 s, FPS is the sum of what each rank measured
        assert r["fps"] == pytest.approx(16 * 4 / 1.0 + 16 * 4 / 1.5, rel=1e-5)


def _ranks(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def _assert_rank0_wrote_everything(run_dir, summary):
    rank0_pid = next(r["pid"] for r in summary["ranks"] if r["rank"] == 0)
    events = glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))
    assert events and all(f".{rank0_pid}." in os.path.basename(e) for e in events), events


@pytest.mark.slow
def test_torchrun_two_processes_on_gloo(tmp_path):
    proc = torchrun(2, [TRAIN, "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=128",
                        "--max_iterations=4"], cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run_dir(tmp_path, "rsl_rl", "cartpole")
    summary = _ranks(run_dir)
    assert summary["world_size"] == 2 and summary["num_envs_total"] == 256
    checksums = {r["rank"]: r["checksum"] for r in summary["ranks"]}
    assert len(checksums) == 2 and len(set(checksums.values())) == 1, checksums
    assert len({r["seed"] for r in summary["ranks"]}) == 2, "each rank has its own env seed"
    # the per-rank checksum line is printed by both ranks, and they agree
    printed = re.findall(r"rank (\d): seed (\d+), parameter checksum ([0-9a-f]+)", proc.stdout)
    assert len(printed) == 2 and len({c for _, _, c in printed}) == 1
    _assert_rank0_wrote_everything(run_dir, summary)
    assert os.path.isfile(os.path.join(run_dir, "model_3.pt"))
    iteration_lines = [ln for ln in proc.stdout.splitlines() if re.match(r"it\s+\d+/4 \| fps", ln)]
    assert len(iteration_lines) == 4, "one console line per iteration, from rank 0 only"


@pytest.mark.slow
def test_two_localhost_nodes_over_c10d(tmp_path):
    import subprocess

    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        env.pop(var, None)
    nodes = []
    for node_rank in (0, 1):
        args = [PYTHON, "-m", "torch.distributed.run", "--nnodes=2", f"--node_rank={node_rank}", "--nproc_per_node=1",
                "--rdzv_id=123", "--rdzv_backend=c10d", f"--rdzv_endpoint=localhost:{port}", TRAIN,
                "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=64", "--max_iterations=3"]
        nodes.append(subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = [p.communicate(timeout=600) for p in nodes]
    for p, (out, err) in zip(nodes, outs):
        assert p.returncode == 0, err[-3000:]
    summary = _ranks(only_run_dir(tmp_path, "rsl_rl", "cartpole"))
    assert summary["world_size"] == 2
    assert sorted(r["node_rank"] for r in summary["ranks"]) == [0, 1]
    assert len({r["checksum"] for r in summary["ranks"]}) == 1
    assert len({r["seed"] for r in summary["ranks"]}) == 2


@pytest.mark.slow
def test_train_then_play_balances_the_pole(tmp_path):
    train = run_cmd([PYTHON, TRAIN, "--task=Isaac-Cartpole-v0", "--headless", "--device=cpu", "--num_envs=2048"],
                    cwd=tmp_path, timeout=1200)
    assert train.returncode == 0, train.stderr[-3000:]
    run_dir = only_run_dir(tmp_path, "rsl_rl", "cartpole")
    assert os.path.isfile(os.path.join(run_dir, "model_149.pt"))
    assert glob.glob(os.path.join(run_dir, "events.out.tfevents.*")), "TensorBoard log on rank 0"
    assert re.search(r"it\s+150/150 \| fps\s+[\d,]+ .*ETA", train.stdout), "progress line with FPS and ETA"

    play = run_cmd([PYTHON, PLAY, "--task=Isaac-Cartpole-v0", "--headless", "--device=cpu", "--num_envs=16", "--video",
                    "--video_length=60"], cwd=tmp_path, timeout=600)
    assert play.returncode == 0, play.stderr[-3000:]
    with open(os.path.join(run_dir, "play.json")) as f:
        result = json.load(f)
    assert result["steps"] == 1000
    assert result["success_fraction"] >= 0.95, result
    for path in result["exported"]:
        assert os.path.getsize(path) > 0
    scripted = torch.jit.load(result["exported"][0])
    assert scripted(torch.zeros(1, 4)).shape == (1, 1)
    assert os.path.getsize(result["video"]) > 1000


def test_garbage_collector_is_off_through_the_start_up_and_on_with_its_objects_frozen_after(tmp_path):
    """rl/garbage_collection.py: the collector is off while the process imports its libraries (mujoco, torch) and
    builds its env, and training runs with it on and the start-up's objects frozen (left out of collections)."""
    out = run_cmd([PYTHON, os.path.join(os.path.dirname(__file__), "mp", "watch_imports.py"), "train", "--library",
                   "rsl_rl", "--num_envs", "16", "--max_iterations", "2", "--device", "cpu", "--headless"],
                  cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    collector = sorted(line for line in lines if line.startswith("collector on at"))
    assert collector == ["collector on at the import of mujoco: False", "collector on at the import of torch: False"]
    after = re.fullmatch(r"collector on after: True, objects frozen: (\d+)", lines[-2])
    assert after and int(after.group(1)) > 10_000, lines[-2]  # torch and jax alone are far more


def test_play_without_checkpoint_is_a_one_line_error(tmp_path):
    proc = run_cmd([PYTHON, PLAY, "--task=Isaac-Cartpole-v0", "--device=cpu", "--num_envs=2"], cwd=tmp_path,
                   timeout=300)
    assert proc.returncode != 0
    assert "fleetlab: error: no runs to load" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_checkpoint_from_another_task_is_refused(tmp_path):
    from fleetlab.rl.run_dir import check_checkpoint_task, record_task

    run = tmp_path / "run"
    record_task(str(run), "Fleet-Cartpole-Direct-v0")
    (run / "model_1.pt").write_bytes(b"x")
    with pytest.raises(FleetlabError, match="trained on 'Fleet-Cartpole-Direct-v0', not 'Fleet-Cartpole-v0'"):
        check_checkpoint_task(str(run / "model_1.pt"), "Fleet-Cartpole-v0")
    check_checkpoint_task(str(run / "model_1.pt"), "Fleet-Cartpole-Direct-v0")


def test_a_bare_checkpoint_name_names_a_file_of_the_latest_run(tmp_path, monkeypatch):
    """`--checkpoint model_50.pt`, as Isaac Lab takes it: a file of the latest run (or --load_run's), not a path
    in the current folder; a path that does not exist stays a one-line error."""
    from fleetlab.rl.run_dir import resolve_checkpoint

    monkeypatch.chdir(tmp_path)
    for run, its in (("2026-01-01_00-00-00", (50, 100)), ("2026-01-02_00-00-00", (50, 150))):
        folder = tmp_path / "logs" / "rsl_rl" / "cartpole" / run
        folder.mkdir(parents=True)
        for it in its:
            (folder / f"model_{it}.pt").write_bytes(b"x")
    experiment = tmp_path / "logs" / "rsl_rl" / "cartpole"
    first, second = experiment / "2026-01-01_00-00-00", experiment / "2026-01-02_00-00-00"
    assert resolve_checkpoint("rsl_rl", "cartpole", None, "model_50.pt") == str(second / "model_50.pt")
    assert resolve_checkpoint("rsl_rl", "cartpole", "2026-01-01.*", "model_100.pt") == str(first / "model_100.pt")
    assert resolve_checkpoint("rsl_rl", "cartpole", None, None) == str(second / "model_150.pt")
    with pytest.raises(FleetlabError, match="matches --checkpoint 'model_7.pt'"):
        resolve_checkpoint("rsl_rl", "cartpole", None, "model_7.pt")
    with pytest.raises(FleetlabError, match="'elsewhere/model_50.pt' does not exist"):
        resolve_checkpoint("rsl_rl", "cartpole", None, os.path.join("elsewhere", "model_50.pt"))


def test_synced_logger_reads_the_device_once_per_iteration_and_keeps_upstream_order():
    """Episodes that end at different steps reach the 100-episode buffers in upstream's (step, env) order,
    with their returns and lengths, and the env's LazyLog rows become per-key samples."""
    from fleetlab.distributed import RunContext
    from fleetlab.envs.vec_env import LazyLog
    from fleetlab.rl.rsl_rl.logger import SyncedLogger
    from fleetlab.tasks.cartpole.agents import rsl_rl as cfg

    logger = SyncedLogger(log_dir=None, cfg=cfg(), env_cfg={}, num_envs=3, is_distributed=False, gpu_world_size=1,
                          gpu_global_rank=0, device="cpu", ctx=RunContext(),
                          iteration_end=lambda it, total_it: None)
    names = ["Episode_Reward/alive", "Episode_Termination/time_out"]
    dones = [[0, 1, 0], [1, 0, 0], [0, 1, 1]]
    for step, d in enumerate(dones):
        log = LazyLog(names, torch.tensor([float("nan") if step == 0 else step, 1.0]))
        logger.process_env_step(torch.tensor([1.0, 2.0, 3.0]), torch.tensor(d, dtype=torch.float), {"log": log})
    samples = logger._drain()
    # env 1 ends at step 0 (return 2, length 1); env 0 at step 1 (2, 2); env 1 (2*2=4, 2) and env 2 (9, 3) at step 2
    assert list(logger.rewbuffer) == [2.0, 2.0, 4.0, 9.0]
    assert list(logger.lenbuffer) == [1.0, 2.0, 2.0, 3.0]
    assert samples["Episode_Reward/alive"][1:] == [1.0, 2.0] and math.isnan(samples["Episode_Reward/alive"][0])
    assert logger.cur_reward_sum.tolist() == [1.0, 0.0, 0.0], "env 0 runs on after its episode ended at step 1"
    assert not logger.ep_extras and not logger._steps


def test_runner_turns_off_the_per_step_nan_check_unless_asked():
    from fleetlab.distributed import RunContext
    from fleetlab.envs import make
    from fleetlab.rl.rsl_rl.env import RslRlVecEnvWrapper
    from fleetlab.rl.rsl_rl.runner import FleetOnPolicyRunner
    from fleetlab.tasks.cartpole.agents import rsl_rl as cfg

    env = RslRlVecEnvWrapper(make("Isaac-Cartpole-v0", num_envs=2))
    assert FleetOnPolicyRunner(env, cfg(), log_dir=None, ctx=RunContext()).cfg["check_for_nan"] is False
    explicit = {**cfg(), "check_for_nan": True}
    assert FleetOnPolicyRunner(env, explicit, log_dir=None, ctx=RunContext()).cfg["check_for_nan"] is True


EXPORT_CHECK = """
import sys, numpy as np, torch
from onnx.reference import ReferenceEvaluator
from fleetlab.rl import args as rl_args, workflow
from fleetlab.rl.run import resolve_run

args = rl_args.parse("rsl_rl", play=True, argv=["--num_envs", "8", "--device", "cpu",
                                                 "agent.actor.obs_normalization=true"])
run = resolve_run("rsl_rl", args, play=True)
ctx, env = workflow.start(run)
run.library.finalize(run, ctx, env, None)
with run.library.session(run, ctx, env, None, None) as session:
    actor = session.runner.alg.actor
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # normalizer statistics far from (0, 1): an export without them gives other actions
        for name, buf in actor.named_buffers():
            if "normalizer" in name and buf.is_floating_point():
                buf.copy_(torch.rand(buf.shape, generator=gen) * 3 + 0.2)
    policy = session.policy()
    paths = session.export(sys.argv[1])
    obs = torch.randn(64, 4, generator=gen) * 2
    want = policy(obs).detach().numpy()
    (got,) = ReferenceEvaluator(paths[1]).run(None, {"obs": obs.numpy()})
    scripted = torch.jit.load(paths[0])(obs).detach().numpy()
    assert np.abs(want).max() > 1e-3
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scripted, want, rtol=1e-4, atol=1e-5)
print("exported policies match")
"""


def test_exported_onnx_and_torchscript_give_the_policy_actions(tmp_path):
    """rsl_rl's exporter (policy.pt, policy.onnx) against the policy the session acts with, observation normalizer
    included; the ONNX model runs in onnx's own reference evaluator (onnxruntime is not a dependency)."""
    result = run_cmd([PYTHON, "-c", EXPORT_CHECK, str(tmp_path / "exported")], tmp_path, timeout=300)
    assert result.returncode == 0 and "exported policies match" in result.stdout, result.stdout + result.stderr[-3000:]
