"""`python -m fleetlab.distributed.jax_launch` = skrl's JAX launcher (`python -m skrl.utils.distributed.jax`, same
flags), except that it exits with the first failing child's exit code. Upstream runs each child through
subprocess.run and ignores its return code, so a crashed run exits 0 and CI or a scheduler sees success."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from unittest import mock

from skrl.utils.distributed.jax import launcher


def _run_child(cmd: list[str], env: dict[str, str]) -> None:
    sys.exit(subprocess.run(cmd, env=env).returncode)


_started: list[multiprocessing.Process] = []


class TrackedProcess(multiprocessing.Process):
    """multiprocessing.Process that remembers itself, so the launcher can read the children's exit codes."""

    def start(self):
        super().start()
        _started.append(self)


def main() -> int:
    # Upstream's launch() starts mp.Process(target=_process) children and joins them; we swap in a target that
    # keeps the child's exit code, and keep hold of the processes to read it.
    with mock.patch.object(launcher, "_process", _run_child), mock.patch.object(launcher.mp, "Process", TrackedProcess):
        launcher.launch()
    codes = [p.exitcode for p in _started]
    failed = [c for c in codes if c]
    if failed:
        print(f"[fleetlab] jax launcher: child exit codes {codes}", file=sys.stderr, flush=True)
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main())
