"""Hooks for RL libraries that start torch.distributed themselves, with nccl and CUDA hard-coded."""

from __future__ import annotations

import contextlib

import torch
import torch.distributed as dist

from fleetlab.patching import swapped


def _no_op(*_args, **_kwargs) -> None:
    return None


@contextlib.contextmanager
def group_made_by_run_context(device: str):
    """Inside this block a library's own `dist.init_process_group("nccl", ...)` is a no-op (RunContext already made
    the group: gloo on CPU, nccl on CUDA), and on CPU so is its `torch.cuda.set_device(...)`, which fails there.
    Upstream offers no hook for either (rl_games' A2CBase.__init__, skrl's import), so both are swapped for the
    duration of the block only."""
    if not (dist.is_available() and dist.is_initialized()):
        yield
        return
    with contextlib.ExitStack() as stack:
        stack.enter_context(swapped(dist, "init_process_group", _no_op))
        if not device.startswith("cuda"):
            stack.enter_context(swapped(torch.cuda, "set_device", _no_op))
        yield
