import os
import signal
import socket
import sys

os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import pytest  # noqa: E402

import fleetlab.tasks  # noqa: E402,F401  (fleetlab's own tasks register themselves)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run in a scratch folder, so logs/ lands there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


PYTHON = sys.executable


def run_cmd(args, cwd, timeout=600, env_extra=None):
    """Run a real process (torchrun, a script) with src/ importable; return the CompletedProcess."""
    import subprocess

    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "JAX_RANK", "JAX_WORLD_SIZE", "SLURM_PROCID"):
        env.pop(var, None)
    env.setdefault("PYTHONFAULTHANDLER", "1")  # a process stopped for its time dumps every thread's stack
    with subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # a hang that happens once in CI must leave its stacks behind: SIGABRT makes faulthandler print them
            proc.send_signal(signal.SIGABRT)
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            pytest.fail(f"{' '.join(map(str, args))} ran past {timeout} s; its last output:\n{out[-3000:]}\n"
                        f"stderr (stacks):\n{err[-12000:]}")
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def torchrun(nproc, script_args, cwd, timeout=600, extra=(), env_extra=None):
    args = [PYTHON, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc_per_node={nproc}",
            f"--master_port={free_port()}", *extra, *script_args]
    return run_cmd(args, cwd, timeout, env_extra=env_extra)


def only_run_dir(root, library, experiment):
    base = os.path.join(root, "logs", library, experiment)
    runs = sorted(os.listdir(base))
    assert len(runs) == 1, f"expected exactly one run directory, found {runs}"
    return os.path.join(base, runs[0])
