"""`fleetlab launch` with real processes on CPU (gloo): kill -9 and resume, no hangs, graceful stop, 2 elastic
localhost nodes, and the one-line errors for bad input."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
from conftest import PYTHON, REPO, free_port, run_cmd

from fleetlab.errors import FleetlabError

SMALL = ["--num_envs", "64", "--device", "cpu"]

# library -> (train args, checkpoint folder in the run dir, checkpoint regex with the iteration as group 1)
LIBRARIES = {
    "rsl_rl": (["--library", "rsl_rl", "--max_iterations", "30", "agent.save_interval=5"], "", r"model_(\d+)\.pt"),
    "rl_games": (["--library", "rl_games", "--max_iterations", "30", "agent.params.config.save_frequency=5"], "nn",
                 r"last_cartpole_ep_(\d+)_rew.*\.pth"),
    # skrl counts env steps: 16 per iteration, a checkpoint every 5 iterations
    "skrl": (["--library", "skrl", "--max_iterations", "30", "agent.agent.experiment.checkpoint_interval=80"],
             "checkpoints", r"fleetlab_(\d+)\.pt"),
}
# what rank 0 prints on resuming: the first iteration (epoch, timestep) it trains next
RESUMED = {"rsl_rl": r"auto-resume from \S+: iterations (\d+) to", "rl_games": r"resuming from \S+ at epoch (\d+)/",
           "skrl": r"resuming from \S+ at timestep (\d+)/"}
EXPERIMENT = "cartpole"  # every library's Cartpole experiment folder


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "JAX_RANK", "JAX_WORLD_SIZE", "SLURM_PROCID", "FLEETLAB_RUN_DIR"):
        env.pop(var, None)
    return env


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_leftover_workers():
    """A failing test must not leave workers behind to slow down the next ones."""
    yield
    while STARTED:
        proc = STARTED.pop()
        try:
            for child in [*psutil.Process(proc.pid).children(recursive=True), psutil.Process(proc.pid)]:
                child.kill()
        except psutil.NoSuchProcess:
            pass


class Launch:
    """A `fleetlab launch` process whose console output is collected as it comes."""

    def __init__(self, args, cwd, env=None):
        import threading

        self.proc = subprocess.Popen([PYTHON, "-m", "fleetlab", "launch", *args], cwd=cwd,
                                     env={**_env(), **(env or {})},
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        STARTED.append(self.proc)
        self.chunks: list[str] = []
        self.reader = threading.Thread(target=lambda: self.chunks.extend(iter(lambda: self.proc.stdout.read(256), "")))
        self.reader.start()

    @property
    def out(self) -> str:
        return "".join(self.chunks)

    def wait_for(self, text: str, timeout: float = 240) -> None:
        deadline = time.time() + timeout
        while text not in self.out:
            assert self.proc.poll() is None and time.time() < deadline, f"never printed {text!r}:\n{self.out[-3000:]}"
            time.sleep(0.1)

    def finish(self, timeout: float = 400) -> tuple[int, str]:
        self.proc.wait(timeout)
        self.reader.join(30)
        return self.proc.returncode, self.out


def run_dir_of(root, library):
    base = os.path.join(root, "logs", library, EXPERIMENT)
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.isdir(base) and os.listdir(base):
            return os.path.join(base, sorted(os.listdir(base))[-1])
        time.sleep(0.2)
    raise AssertionError(f"no run directory under {base}")


def checkpoints(folder, pattern):
    if not os.path.isdir(folder):
        return []
    return sorted(int(m.group(1)) for f in os.listdir(folder) if (m := re.fullmatch(pattern, f)))


def worker_pids(launcher_pid):
    """{global rank: pid} of the launcher's training processes (read from their environment: torchrun's RANK, or
    JAX_RANK from the JAX launcher)."""
    out = {}
    for proc in psutil.Process(launcher_pid).children(recursive=True):
        try:
            env = proc.environ()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        rank = env.get("RANK", env.get("JAX_RANK"))
        if rank is not None and "fleetlab" in " ".join(proc.cmdline()):
            out[int(rank)] = proc.pid
    return out


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_kill_9_one_worker_restarts_and_resumes_to_the_end(in_tmp, library):
    train_args, subdir, pattern = LIBRARIES[library]
    launch = Launch(["--nproc_per_node", "2", "--max_restarts", "1", "--", "train", *train_args, *SMALL], in_tmp)
    run_dir = run_dir_of(in_tmp, library)
    folder = os.path.join(run_dir, subdir)
    deadline = time.time() + 240
    while not checkpoints(folder, pattern) or max(checkpoints(folder, pattern)) < checkpoints_at(library, 10):
        assert launch.proc.poll() is None and time.time() < deadline, launch.out[-3000:]
        time.sleep(0.1)
    seen = max(checkpoints(folder, pattern))
    os.kill(worker_pids(launch.proc.pid)[1], signal.SIGKILL)
    code, out = launch.finish()
    assert code == 0, out[-3000:]
    # the group restarted and rank 0 resumed from a checkpoint no older than the last one before the kill
    resumed = re.search(RESUMED[library], out)
    assert resumed, out[-3000:]
    resumed_at = int(resumed.group(1)) - (0 if library == "skrl" else 1)  # the checkpoint's own number
    assert resumed_at >= seen, (resumed_at, seen)
    rank1_log = open(os.path.join(run_dir, "logs", "rank_1.log")).read()
    assert "restart 1" in rank1_log
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    assert summary["world_size"] == 2 and summary["checksums_identical"]
    # the restored weights, normalizers and optimizer state are those the checkpoint saved (its recorded hash)
    resumed = summary["resumed"]
    assert resumed["auto"] and resumed["saved_state_checksum"] is not None, resumed
    assert resumed["restored_state_checksum"] == resumed["saved_state_checksum"], resumed
    assert summary["initial_env_states_distinct"], [r["initial_env_checksum"] for r in summary["ranks"]]
    final = max(checkpoints(folder, pattern))
    assert final == checkpoints_at(library, 30) - (1 if library == "rsl_rl" else 0)  # the run's last iteration


def checkpoints_at(library, iteration):
    """The checkpoint number after `iteration` iterations, in each library's counting."""
    return iteration * 16 if library == "skrl" else iteration


@pytest.mark.parametrize("launcher", ["torch", "jax"])
def test_a_raise_in_rank_1_ends_every_rank_within_60_s(in_tmp, launcher):
    stamp = os.path.join(in_tmp, "raised_at")
    script = os.path.join(REPO, "tests", "mp", "raise_in_rank.py")
    train = [*SMALL, "--max_iterations", "200", "--distributed"]
    if launcher == "torch":
        cmd = [PYTHON, "-m", "fleetlab", "launch", "--nproc_per_node", "2", "--", script, "--library", "rsl_rl", *train]
    else:
        cmd = [PYTHON, "-m", "fleetlab.distributed.jax_launch", "--nproc_per_node", "2",
               "--coordinator_address", f"127.0.0.1:{free_port()}", script, "--library", "skrl",
               "--ml_framework", "jax", *train]
    proc = subprocess.Popen(cmd, cwd=in_tmp, env={**_env(), "FAIL_STAMP": stamp, "FAIL_AT": "3"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    STARTED.append(proc)
    children = []
    while proc.poll() is None and not os.path.exists(stamp):
        children = psutil.Process(proc.pid).children(recursive=True) or children
        time.sleep(0.1)
    out, _ = proc.communicate(timeout=120)
    ended = time.time()
    assert os.path.exists(stamp), out[-3000:]
    assert proc.returncode == 1, out[-3000:]  # the failing rank's own code: an uncaught exception exits 1
    assert ended - float(open(stamp).read()) < 60
    assert "injected failure on rank 1" in out
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, "a worker outlived the run"


def test_two_elastic_localhost_nodes(in_tmp):
    port = free_port()
    common = ["--nnodes", "1:2", "--nproc_per_node", "1", "--rdzv_endpoint", f"localhost:{port}", "--rdzv_id", "job42",
              "--", "train", "--library", "rsl_rl", "--max_iterations", "4", *SMALL]
    nodes = [Launch(common, in_tmp) for _ in range(2)]
    codes, outs = zip(*(n.finish(300) for n in nodes))
    assert codes == (0, 0), outs
    run_dir = os.path.join(in_tmp, "logs", "rsl_rl", "cartpole", "job42")
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    assert summary["world_size"] == 2 and summary["checksums_identical"]
    assert summary["initial_env_states_distinct"], [r["initial_env_checksum"] for r in summary["ranks"]]
    assert sorted(r["node_rank"] for r in summary["ranks"]) == [0, 1]  # one process on each "node"
    assert os.path.isfile(os.path.join(run_dir, "logs", "rank_1.log"))
    assert sum("[fleetlab] done in" in o for o in outs) == 1  # one console (rank 0) reports


@pytest.mark.parametrize("library", [*LIBRARIES, "skrl-jax"])
def test_sigterm_stops_gracefully_with_a_checkpoint(in_tmp, library):
    train_args = ["--library", library, "--max_iterations", "5000"]
    if library == "skrl-jax":  # skrl's JAX launcher underneath
        train_args = ["--library", "skrl", "--ml_framework", "jax", "--max_iterations", "5000"]
    launch = Launch(["--nproc_per_node", "2", "--", "train", *train_args, *SMALL], in_tmp)
    launch.wait_for("stop at the next iteration boundary")  # the handlers are in place: training has started
    time.sleep(3)
    launch.proc.send_signal(signal.SIGTERM)
    code, out = launch.finish(120)
    assert code == 128 + signal.SIGTERM, out[-3000:]
    stopped = re.search(r"stopped by SIGTERM; checkpoint: (\S+)", out)
    assert stopped, out[-3000:]
    path = stopped.group(1)
    if library.startswith("skrl"):
        path += ".pickle" if library == "skrl-jax" else ".pt"
    assert os.path.isfile(path), path
    import torch

    if path.endswith(".pickle"):  # skrl-JAX pickles its checkpoints
        import pickle

        state = pickle.load(open(path, "rb"))
    else:
        state = torch.load(path, map_location="cpu", weights_only=False)
    assert state  # loadable and not empty
    # it holds the iteration the run stopped at (the number in its name)
    stopped_at = int(re.search(r"_(\d+)", os.path.basename(path)).group(1))
    if library == "rsl_rl":
        assert state["iter"] == stopped_at, (state["iter"], path)
    elif library == "rl_games":
        assert state["epoch"] == stopped_at, (state["epoch"], path)
    else:  # skrl: fleetlab's side file, written with the agent file, holds the timestep
        side = torch.load(os.path.join(os.path.dirname(path), f"fleetlab_{stopped_at}.pt"), weights_only=False)
        assert side["timestep"] == stopped_at, (side["timestep"], path)
    # and a resume from it (one process) starts there, with the state it saved
    resumed = run_cmd([PYTHON, "-m", "fleetlab", "train", *train_args[:-2], "--max_iterations", "1", "--resume",
                       *SMALL], in_tmp, timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    base = os.path.dirname(path) if library == "rsl_rl" else os.path.dirname(os.path.dirname(path))  # <run>[/nn]
    newest = sorted(os.listdir(os.path.dirname(base)))[-1]
    summary = json.load(open(os.path.join(os.path.dirname(base), newest, "summary.json")))
    assert summary["resumed"]["path"] == path, (summary["resumed"], path)
    assert summary["resumed"]["restored_state_checksum"] == summary["resumed"]["saved_state_checksum"] is not None


def test_port_in_use_is_a_one_line_error(in_tmp):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cmd([PYTHON, "-m", "fleetlab", "launch", "--nproc_per_node", "2", "--master_port", str(port), "--",
                          "train", *SMALL], in_tmp, timeout=120)
    assert result.returncode == 2
    assert f"port {port} is already in use" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("bad,message", [
    (["--nproc_per_node", "2", "--", "train", "--library", "skrl", "--ml_framework", "tf"], "invalid choice: 'tf'"),
    (["--nproc_per_node", "0", "--", "train"], "--nproc_per_node must be at least 1"),
    (["--nnodes", "2", "--rdzv_endpoint", "localhost:1", "--", "train"], "needs --rdzv_id"),
    (["--nproc_per_node", "2", "train"], "put the command after '--'"),
    (["--nproc_per_node", "2", "--", "train", "--task", "Isaac-Cartpol-v0"], "Isaac-Cartpole-v0"),
])
def test_bad_launch_input_is_a_one_line_error(in_tmp, bad, message):
    result = run_cmd([PYTHON, "-m", "fleetlab", "launch", *bad], in_tmp, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_more_processes_than_gpus_is_refused(monkeypatch):
    import torch

    from fleetlab import launch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(FleetlabError, match="more than the 1 GPU"):
        launch._check_gpus(2, None)
    launch._check_gpus(2, "cpu")  # a CPU run has no such limit


def test_jax_launcher_rejects_elastic_nodes(in_tmp):
    result = run_cmd([PYTHON, "-m", "fleetlab", "launch", "--nnodes", "1:2", "--rdzv_id", "x", "--rdzv_endpoint",
                      "localhost:1", "--", "train", "--library", "skrl", "--ml_framework", "jax", *SMALL], in_tmp,
                     timeout=120)
    assert result.returncode == 2 and "fixed number of nodes" in result.stderr, result.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
