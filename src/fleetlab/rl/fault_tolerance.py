"""What a training run needs to survive a kill or a stop: atomic checkpoint files, the per-rank RNG state, the latest
complete checkpoint of a run directory. The graceful stop on SIGINT/SIGTERM is fleetlab/process.py's StopRequest.

The library sessions (rl/rsl_rl/, rl/rl_games/, rl/skrl/) call these at their libraries' iteration boundaries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import random
import re
import signal
import tempfile
from typing import TYPE_CHECKING

import numpy as np

from fleetlab.distributed import RunContext

if TYPE_CHECKING:
    import torch

# torch is imported inside the functions that use it: brax saves its first checkpoint well into training, and its
# start-up should not pay for torch's import (~3 s) before then.


class GracefulStop(Exception):
    """Raised at an iteration boundary after SIGINT/SIGTERM, once the checkpoint is written."""

    def __init__(self, signum: int, checkpoint: str | None):
        super().__init__(f"stopped by {signal.Signals(signum).name}; checkpoint: {checkpoint}")
        self.signum, self.checkpoint = signum, checkpoint

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM


# -- atomic files ----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_write(path: str):
    """A binary file object for `path` that appears there only once fully written: temporary file in the same
    folder, fsync, rename. A crash (or kill -9) mid-write leaves the previous file, never a truncated one."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    # mkstemp makes the file 0600; a checkpoint is as readable as any file the user writes (0644 under the usual
    # umask), so teammates on shared storage can play it
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise


def atomic_torch_save(obj, path) -> None:
    import torch

    with atomic_write(os.fspath(path)) as f:
        torch.save(obj, f)


def atomic_pickle_save(obj, path) -> None:
    """For the JAX workflows' checkpoints: plain values only, which rl/checkpoint_reader.py reads without resolving
    any Python global."""
    with atomic_write(os.fspath(path)) as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def move_into_place(written: str, path: str) -> None:
    """A file written completely elsewhere on the same file system (a library's own writer, pointed at a staging
    folder) appears at `path` in one rename, after fsync: never half-written."""
    with open(written, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(written, path)


def latest_checkpoint(folder: str, pattern: str) -> str | None:
    """The most recently completed checkpoint in `folder` whose name matches `pattern` (temporary files of an
    interrupted write never match: they end in .tmp). Completion time = the rename, i.e. the file's mtime."""
    if not os.path.isdir(folder):
        return None
    paths = [os.path.join(folder, f) for f in os.listdir(folder) if re.fullmatch(pattern, f)]
    return max(paths, key=os.path.getmtime) if paths else None


def share_checkpoint(ctx: RunContext, path: str | None) -> str | None:
    """Rank 0's choice of checkpoint, readable on every rank: other nodes may not share rank 0's disk, so rank 0
    broadcasts the file's bytes and a rank that cannot see the path reads a local copy."""
    if not ctx.is_distributed:
        return path
    payload = None
    if ctx.is_writer and path is not None:
        with open(path, "rb") as f:
            payload = (path, f.read())
    payload = ctx.broadcast_object(payload)
    if payload is None:
        return None
    path, data = payload
    if os.path.isfile(path):
        return path
    local = os.path.join(tempfile.mkdtemp(prefix="fleetlab_ckpt_"), os.path.basename(path))
    with open(local, "wb") as f:
        f.write(data)
    return local


# -- RNG state -------------------------------------------------------------------------------------------------------


def rng_state(env=None, extra: dict | None = None) -> dict:
    """This process's random state: Python, NumPy, torch (CPU and its CUDA device) and the env's JAX keys. Only
    tensors and plain values (ints, strings, tuples), so a checkpoint that carries it loads with weights_only=True."""
    import torch

    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "numpy": (kind, key_to_tensor(keys), pos, has_gauss, cached),
             "torch": torch.get_rng_state()}
    device = str(getattr(env, "device", "cpu"))
    if device.startswith("cuda"):
        state["torch_cuda"] = torch.cuda.get_rng_state(torch.device(device))
    if getattr(env, "state", None) is not None:  # fleetlab envs (the pure-torch baseline has no JAX keys)
        state["env_key"] = key_to_tensor(env.state.key)
    state.update(extra or {})
    return state


def key_to_tensor(key) -> torch.Tensor:
    """A uint32 key array (a JAX PRNG key, NumPy's MT19937 state) as an int64 tensor: torch checkpoints that load
    with weights_only=True hold tensors, not NumPy arrays."""
    import torch

    return torch.from_numpy(np.asarray(key).astype(np.int64))


def key_from_tensor(saved: torch.Tensor) -> np.ndarray:
    return saved.numpy().astype(np.uint32)


def set_rng_state(state: dict, env=None) -> None:
    import jax
    import torch

    random.setstate(state["python"])
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, key_from_tensor(keys), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    device = str(getattr(env, "device", "cpu"))
    if "torch_cuda" in state and device.startswith("cuda"):
        torch.cuda.set_rng_state(state["torch_cuda"], torch.device(device))
    key_fits = getattr(env, "state", None) is not None and "env_key" in state \
        and tuple(state["env_key"].shape) == tuple(env.state.key.shape)
    if key_fits:
        key = jax.device_put(key_from_tensor(state["env_key"]), env.state.key.sharding)
        env.state = dataclasses.replace(env.state, key=key)


def gather_rng(ctx: RunContext, env=None, extra: dict | None = None) -> list[dict]:
    """Every rank's RNG state, in rank order (a collective: call it on all ranks at the same iteration)."""
    return ctx.all_gather_object(rng_state(env, extra))


def restore_rng(ctx: RunContext, states: list[dict] | None, env=None) -> bool:
    """Restore this rank's entry of a checkpoint's RNG states. With another world size there is no entry to take:
    keep the fresh seed (base + rank) and say so."""
    if not states:
        return False
    if len(states) != ctx.world_size:
        print(f"[fleetlab] checkpoint has RNG states of {len(states)} ranks, this run has {ctx.world_size}: "
              "RNG streams start from the seeds instead", flush=True)
        return False
    set_rng_state(states[ctx.rank], env)
    return True
