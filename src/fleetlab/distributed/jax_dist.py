"""jax.distributed for skrl-JAX: start the runtime, and move small Python objects between processes."""

from __future__ import annotations

import pickle
from typing import Any

import jax
import numpy as np


def initialize(coordinator: str, world_size: int, rank: int, local_rank: int, on_gpu: bool, timeout_s: float) -> None:
    """jax.distributed.initialize, once per process. On CPU, cross-process collectives need gloo."""
    if not on_gpu:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=coordinator,
        num_processes=world_size,
        process_id=rank,
        local_device_ids=[local_rank] if on_gpu else None,
        initialization_timeout=int(timeout_s),
    )


def is_running() -> bool:
    from jax._src import distributed

    return distributed.global_state.client is not None


def shutdown() -> None:
    try:
        jax.distributed.shutdown()
    except Exception:  # already down, or never up
        pass


def all_gather_object(obj: Any) -> list:
    from jax.experimental import multihost_utils

    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    sizes = np.asarray(multihost_utils.process_allgather(np.asarray([data.size], np.int32))).reshape(-1)
    # each new shape is a new XLA program: pad to a power of two so that objects of similar size (the episode
    # statistics gathered at every logging interval) reuse one compiled all-gather
    padded = np.zeros(1 << int(sizes.max() - 1).bit_length(), np.uint8)
    padded[: data.size] = data
    gathered = np.asarray(multihost_utils.process_allgather(padded)).reshape(len(sizes), -1)
    return [pickle.loads(gathered[i, : sizes[i]].tobytes()) for i in range(len(sizes))]


def broadcast_object(obj: Any) -> Any:
    return all_gather_object(obj)[0]
