"""`python -m fleetlab.distributed.jax_launch` = skrl's JAX launcher (`python -m skrl.utils.distributed.jax`, same
flags), with three upstream gaps fixed:
- upstream runs each child through subprocess.run and ignores its return code, so a crashed run exits 0 and CI or
  a scheduler sees success: this exits with the first failing child's exit code;
- upstream joins the children one by one, so when one crashes the others wait in a collective (jax.distributed's
  heartbeat takes minutes to notice): this stops the others (SIGTERM, then SIGKILL) as soon as one fails;
- upstream gives each child JAX_RANK and JAX_LOCAL_RANK but not the number of processes per node, so a child
  cannot tell its node (summary.json's node_rank): this adds JAX_LOCAL_WORLD_SIZE."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

from skrl.utils.distributed.jax import launcher

from fleetlab.distributed.process_tree import become_subreaper, end_descendants, kill_tree
from fleetlab.patching import swapped

GRACE_S = 10.0  # after SIGTERM, the surviving children get this long before SIGKILL


def _run_child(cmd: list[str], env: dict[str, str]) -> None:
    proc = subprocess.Popen(cmd, env=env)
    for sig in (signal.SIGTERM, signal.SIGINT):  # pass stop requests on to the training process
        signal.signal(sig, lambda signum, _frame: proc.send_signal(signum))
    code = proc.wait()
    sys.exit(code if code >= 0 else 128 - code)


_started: list[multiprocessing.Process] = []
_first_failure: list[int] = []  # the exit code of the child that failed first (the others are stopped after it)


class TrackedProcess(multiprocessing.Process):
    """multiprocessing.Process that remembers itself, so the launcher can read the children's exit codes."""

    def start(self):
        super().start()
        _started.append(self)


def _stop_all_when_one_fails(done: threading.Event) -> None:
    while not done.wait(0.5):
        failed = [p.exitcode for p in _started if p.exitcode not in (None, 0)]
        if failed:
            _first_failure.append(failed[0])
            alive = [p for p in _started if p.exitcode is None]
            for p in alive:
                p.terminate()  # SIGTERM: _run_child forwards it to the training process
            deadline = time.time() + GRACE_S
            for p in alive:
                p.join(max(deadline - time.time(), 0))
            for p in alive:
                if p.exitcode is None:
                    kill_tree(p.pid)
            return


def main() -> int:
    # Upstream's launch() starts mp.Process(target=_process) children and joins them, with no hook: for the duration
    # of launch() we swap in a target that keeps the child's exit code, and a Process class that keeps hold of the
    # processes to read it and to stop them.
    become_subreaper()
    per_node = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    per_node.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)  # upstream's flag and default
    os.environ["JAX_LOCAL_WORLD_SIZE"] = str(per_node.parse_known_args()[0].nproc_per_node)  # children copy os.environ
    done = threading.Event()
    threading.Thread(target=_stop_all_when_one_fails, args=(done,), daemon=True).start()
    # Upstream installs no handler: a SIGTERM kills the launcher and orphans the children. Pass it on instead, so
    # the workers stop gracefully (checkpoint first) and the launcher exits with their code.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: [os.kill(p.pid, signum) for p in _started if p.exitcode is None])
    try:
        with swapped(launcher, "_process", _run_child), swapped(launcher.mp, "Process", TrackedProcess):
            launcher.launch()
    finally:
        done.set()
        end_descendants()  # no process outlives the launcher (multiprocessing's resource tracker included)
    codes = [p.exitcode for p in _started]
    failed = [c for c in codes if c]
    if failed:
        print(f"[fleetlab] jax launcher: child exit codes {codes}", file=sys.stderr, flush=True)
    return (_first_failure or failed or [0])[0]


if __name__ == "__main__":
    sys.exit(main())
