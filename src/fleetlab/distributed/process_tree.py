"""The launchers' promise that no process outlives them: every descendant is ended before a launcher returns.

A launcher's descendants are more than its workers: skrl's JAX launcher starts its children with multiprocessing's
"spawn", which also starts multiprocessing's resource tracker; that one ignores SIGTERM and only ends once it reads
EOF from its pipe, i.e. some time AFTER the launcher has exited. A worker whose parent died is re-parented to init
and drops out of the launcher's tree unless the launcher is a child subreaper (Linux), which keeps it findable.
"""

from __future__ import annotations

import ctypes
import os
import sys

import psutil

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of init, so end_descendants still finds them."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def kill_tree(pid: int) -> None:
    """SIGKILL `pid` and everything below it (children first, so none is re-parented while we look)."""
    try:
        parent = psutil.Process(pid)
        procs = [*parent.children(recursive=True), parent]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def end_descendants(grace_s: float = 5.0) -> list[int]:
    """End every descendant of this process and reap it: multiprocessing's resource tracker through its own stop
    (closes its pipe and waits for it), the rest with SIGTERM, then SIGKILL after `grace_s`. Returns the pids that
    had to be ended (empty when the workers had already exited, which is the normal case)."""
    _stop_resource_tracker()
    me = psutil.Process()
    procs = me.children(recursive=True)
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace_s)
    for child in me.children():  # reap the direct children psutil waited on by polling (no zombies left behind)
        try:
            os.waitpid(child.pid, os.WNOHANG)
        except ChildProcessError:
            pass
    return [p.pid for p in procs]


def _stop_resource_tracker() -> None:
    # Private API of multiprocessing (3.11-3.13): _stop() closes the tracker's pipe and waits for it to exit. Without
    # it the tracker lingers after our exit until it notices EOF; with SIGTERM it would not stop at all (ignored).
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()
