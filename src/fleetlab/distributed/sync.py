"""All-reduces of metrics and statistics across ranks (torch.distributed). No-ops in a single process."""

from __future__ import annotations

import hashlib
import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch


def _dist_ready() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def all_reduce_sum(values: torch.Tensor) -> torch.Tensor:
    """Sum of `values` over all ranks (a new tensor; the input is left alone)."""
    out = values.clone()
    if _dist_ready():
        import torch.distributed as dist

        dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out


def global_batch_moments(mean: torch.Tensor, var: torch.Tensor, count: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    """The mean, (population) variance and count of the union of every rank's batch, from each rank's own
    batch moments. Normalizers fed with these apply the same update on every rank."""
    if not _dist_ready():
        return mean, var, count
    import torch
    import torch.distributed as dist

    n = torch.tensor([float(count)], dtype=torch.float64, device=mean.device)
    m, v = mean.to(torch.float64).reshape(-1), var.to(torch.float64).reshape(-1)
    moments = torch.cat([m * n, (v + m**2) * n, n])
    dist.all_reduce(moments)
    total = moments[-1]
    g_mean = moments[: m.numel()] / total
    g_var = moments[m.numel() : 2 * m.numel()] / total - g_mean**2
    return g_mean.reshape(mean.shape).to(mean.dtype), g_var.reshape(var.shape).to(var.dtype), int(total.item())


def nanmean_over_ranks(samples: dict[str, list[float]], device: str) -> dict[str, float]:
    """For each key, the mean over every rank's non-NaN samples. Every rank must pass the same keys."""
    import torch

    keys = sorted(samples)
    if not keys:
        return {}
    stats = torch.zeros(len(keys), 2, dtype=torch.float64)  # filled on the host, sent to the device once
    for i, key in enumerate(keys):
        vals = torch.tensor(samples[key], dtype=torch.float64)
        vals = vals[~torch.isnan(vals)]
        stats[i, 0], stats[i, 1] = vals.sum(), vals.numel()
    stats = all_reduce_sum(stats.to(device)).cpu()
    return {k: float(stats[i, 0] / stats[i, 1]) for i, k in enumerate(keys) if stats[i, 1] > 0}


def pooled_over_ranks(ctx, samples: dict[str, list[float]]) -> dict[str, float]:
    """For each key that any rank has, one value over every rank's non-NaN samples: the max of keys ending in
    "(max)", the min of "(min)" keys (skrl's names), else the mean. Ranks may differ in keys (a rank whose envs
    finished no episode has no return samples). Goes through ctx.all_gather_object, so it serves torch.distributed
    and jax.distributed runs alike; it is called once per logging interval, not per step."""
    local = {}
    for key, values in samples.items():
        vals = [float(v) for v in values if v == v]  # NaN != NaN
        if vals:
            local[key] = (sum(vals), len(vals), max(vals), min(vals))
    pooled: dict[str, list] = {}
    for part in ctx.all_gather_object(local):
        for key, (total, count, high, low) in part.items():
            t, c, h, lo = pooled.get(key, (0.0, 0, -np.inf, np.inf))
            pooled[key] = (t + total, c + count, max(h, high), min(lo, low))
    return {key: h if key.endswith("(max)") else lo if key.endswith("(min)") else t / c
            for key, (t, c, h, lo) in sorted(pooled.items())}


def state_checksum(tree) -> str:
    """A short hash of a nested training state (dicts in key order, lists, tuples, tensors and arrays by their exact
    bytes, plain values by repr): what a checkpoint holds, e.g. {"model": state_dict, "optimizer": state_dict}."""
    digest = hashlib.sha256()
    torch = sys.modules.get("torch")

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in sorted(node, key=str):
                digest.update(repr(key).encode())
                walk(node[key])
        elif isinstance(node, (list, tuple)):
            digest.update(b"[")
            for item in node:
                walk(item)
            digest.update(b"]")
        elif torch is not None and isinstance(node, torch.Tensor):
            digest.update(str(node.dtype).encode() + node.detach().to("cpu").contiguous().numpy().tobytes())
        elif hasattr(node, "__array__") and not isinstance(node, (int, float, bool)):
            array = np.asarray(node)
            digest.update(str(array.dtype).encode() + np.ascontiguousarray(array).tobytes())
        else:
            digest.update(repr(node).encode())

    walk(tree)
    return digest.hexdigest()[:16]


def parameter_checksum(module_or_tensors) -> str:
    """A short hash of the parameters' exact bytes: equal on every rank iff the weights are bit-identical."""
    tensors = module_or_tensors.state_dict().values() if hasattr(module_or_tensors, "state_dict") else module_or_tensors
    digest = hashlib.sha256()
    torch = sys.modules.get("torch")  # a torch tensor can only come from a process that imported torch
    for t in tensors:
        if torch is not None and isinstance(t, torch.Tensor):
            digest.update(t.detach().to("cpu").contiguous().numpy().tobytes())
        elif hasattr(t, "__array__"):  # numpy / JAX arrays
            digest.update(np.ascontiguousarray(np.asarray(t)).tobytes())
    return digest.hexdigest()[:16]
