"""When Python's cyclic garbage collector runs in a training or playing process.

A full collection walks every object the process holds, and holds the GIL while it does. A process with jax, MuJoCo
Warp and brax loaded holds ~650k objects, nearly all of them as long-lived as the process (modules, functions, the
env, traced programs). On this repo's 2-core CPU a brax Humanoid run spent 1.8 s in collections before its first
epoch ended, 0.5 s of it during the imports alone, each collection longer than the last
(benchmarks/results/2026-12-06_cpu_gc/). So the collector is off while a process imports its libraries, builds its
env and (brax) traces its program, and then comes back with those objects frozen: later collections skip them.
Frozen objects are never freed, which a process that keeps them to its end loses nothing by; the cyclic garbage
made while the collector is off stays until the freeze (no rise of peak memory was seen on the CPU)."""

from __future__ import annotations

import gc


def pause() -> None:
    gc.disable()


def freeze_and_restart() -> None:
    """Every object alive now is left out of later collections, and the collector runs again."""
    gc.freeze()
    gc.enable()


def restart() -> None:
    """The collector on again, without a freeze: for a process (a test's) that goes on after a workflow."""
    gc.enable()
