"""Hooks for RL libraries that start torch.distributed themselves, with nccl and CUDA hard-coded."""

from __future__ import annotations

import contextlib
from unittest import mock

import torch
import torch.distributed as dist


@contextlib.contextmanager
def group_made_by_run_context(device: str):
    """Inside this block a library's own `dist.init_process_group("nccl", ...)` is a no-op (RunContext already made
    the group: gloo on CPU, nccl on CUDA), and on CPU so is its `torch.cuda.set_device(...)`, which fails there."""
    if not (dist.is_available() and dist.is_initialized()):
        yield
        return
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(dist, "init_process_group", lambda *a, **k: None))
        if not device.startswith("cuda"):
            stack.enter_context(mock.patch.object(torch.cuda, "set_device", lambda *a, **k: None))
        yield
