"""fleetlab/process.py: importing fleetlab changes nothing in the process; the CLI's process setup changes what it
says it changes, and puts all of it back."""

import subprocess
import sys

from conftest import REPO

SNAPSHOT = """
import gc, os, signal, sys
def snapshot():
    return {"env": dict(os.environ),
            "signals": {s.name: signal.getsignal(s) for s in signal.valid_signals() if isinstance(s, signal.Signals)},
            "streams": (sys.stdout, sys.stderr, sys.stdout.line_buffering, sys.stderr.line_buffering,
                        sys.stdout.write_through, sys.stderr.write_through),
            "gc": gc.isenabled()}
def diff(a, b):
    return {k: (a[k], b[k]) for k in a if a[k] != b[k]}
"""


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SNAPSHOT + code], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}/src", "HOME": "/tmp",
                                            "JAX_PLATFORMS": "cpu"})


def test_importing_fleetlab_changes_no_environment_variable_signal_handler_or_stream():
    out = _python("""
import gymnasium  # imported by fleetlab to register its ids; gymnasium itself sets PYGAME_HIDE_SUPPORT_PROMPT
before = snapshot()
import fleetlab, fleetlab.cli, fleetlab.process  # (JAX, imported with fleetlab.envs, sets variables of its own)
after = snapshot()
assert not diff(before, after), diff(before, after)
assert "jax" not in sys.modules and "mujoco" not in sys.modules, "the CLI's process setup must come before them"
print("unchanged")
""")
    assert out.returncode == 0 and out.stdout.strip() == "unchanged", out.stdout + out.stderr


def test_the_process_setup_sets_what_it_reports_and_restores_all_of_it():
    out = _python("""
import gc, os, signal
import gymnasium, jax, torch  # (they set variables of their own when imported)
torch.set_num_threads(2)
before = snapshot()
from fleetlab.process import ProcessSetup
from fleetlab.rl.args import parse
from fleetlab.rl.run import resolve_run

with ProcessSetup() as process:
    assert not gc.isenabled(), "the collector is off through the start-up"
    run = resolve_run("rsl_rl", parse("rsl_rl", argv=["--device", "cpu"]), play=False)
    process.configure_process(run)
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and os.environ["JAX_COMPILATION_CACHE_DIR"]
    assert torch.get_num_threads() == 1, torch.get_num_threads()
    assert sys.stdout.line_buffering
    with process.stop_signals() as stop:
        assert signal.getsignal(signal.SIGTERM) == stop.handle
        os.kill(os.getpid(), signal.SIGTERM)  # a flag, not the end of the process
        assert stop.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "the old handler is back after training"
after = snapshot()
assert torch.get_num_threads() == 2
assert not diff(before, after), diff(before, after)
print("restored")
""")
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "restored", out.stdout + out.stderr
    header = [line for line in out.stdout.splitlines() if line.startswith("[fleetlab] process: ")]
    assert len(header) == 1 and "torch threads 1" in header[0] and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in header[0]


def test_a_user_choice_of_threads_wins():
    out = _python("""
import torch
from fleetlab.process import ProcessSetup
from fleetlab.rl.args import parse
from fleetlab.rl.run import resolve_run

with ProcessSetup() as process:
    process.configure_process(resolve_run("rsl_rl", parse("rsl_rl", argv=["--device", "cpu", "--threads", "2"]),
                                          play=False))
    print("threads", torch.get_num_threads())
""")
    assert out.returncode == 0 and "threads 2" in out.stdout, out.stdout + out.stderr
