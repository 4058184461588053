"""Reading checkpoints without running code from them, and with one-line errors for files that are not ours to read.

A torch checkpoint is a pickle, and unpickling can call any Python function: the libraries load theirs with
`torch.load(..., weights_only=False)` (rsl_rl's OnPolicyRunner.load, rl_games' torch_ext.safe_load, skrl's
Agent.load) and skrl-JAX with `pickle.load`. So a checkpoint downloaded from someone else could execute code.
Here every checkpoint is read ONCE, by us:
- torch files with `weights_only=True` (tensors, containers and plain types only; plus NumPy scalars and dtypes,
  which rl_games stores and allows itself);
- JAX pickles (skrl-JAX's, brax's) with an unpickler that resolves no global at all (they hold dicts of flax's
  msgpack bytes and plain values);
and the adapters hand the loaded dict to the library (rsl_rl's PPO.load, rl_games' set_full_state_weights, skrl's
checkpoint modules). Anything else in the file is refused with a FleetlabError.
"""

from __future__ import annotations

import io
import pickle
import re

import numpy as np

from fleetlab.errors import FleetlabError

try:
    from numpy._core.multiarray import scalar as _numpy_scalar  # NumPy 2
except ImportError:
    from numpy.core.multiarray import scalar as _numpy_scalar
_NUMPY_SCALARS = [np.dtype, _numpy_scalar, *{type(np.dtype(t)) for t in (np.float32, np.float64, np.int64)}]


def read_checkpoint(path: str) -> dict:
    """The dict saved in `path`, loaded without running code from it. A file that is not a readable checkpoint is
    a FleetlabError that says so."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise FleetlabError(f"cannot read checkpoint '{path}': {err.strerror}") from None
    if not data:
        raise FleetlabError(f"'{path}' is not a readable checkpoint: the file is empty")
    state = _unpickle_jax(path, data) if path.endswith(".pickle") else _torch_load(path, data)
    if not isinstance(state, dict):
        raise FleetlabError(f"'{path}' is not a readable checkpoint: it holds a {type(state).__name__}, not a dict")
    return state


def _torch_load(path: str, data: bytes) -> dict:
    if not data.startswith((b"PK\x03\x04", b"\x80")):  # torch.save writes a zip file (a bare pickle before torch 1.6)
        raise FleetlabError(f"'{path}' is not a readable checkpoint: it is not a file written by torch.save")
    import torch  # here, not at the top: a fresh brax run reads no checkpoint and need not import torch

    try:
        with torch.serialization.safe_globals(_NUMPY_SCALARS):
            return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        if "Weights only load failed" in str(err):
            found = re.search(r"GLOBAL ([\w.]+)", str(err))
            what = f" ({found.group(1)})" if found else ""
            raise FleetlabError(
                f"refused to load '{path}': it holds a Python object{what} other than tensors and plain values, which "
                "could run code when loaded (see 'Checkpoints and trust' in docs/troubleshooting.md)"
            ) from None
        raise FleetlabError(f"'{path}' is not a readable checkpoint (not a torch file: {_first_line(err)})") from None
    except Exception as err:  # a truncated zip, random bytes, a text file: torch's messages name its internals
        raise FleetlabError(f"'{path}' is not a readable checkpoint (damaged, truncated or not a torch file: "
                            f"{type(err).__name__})") from None


class _NoGlobalsUnpickler(pickle.Unpickler):
    """skrl-JAX and brax checkpoints are dicts of bytes (flax msgpack) and plain values: nothing in them needs a
    Python global."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global '{module}.{name}'")


def _unpickle_jax(path: str, data: bytes) -> dict:
    try:
        return _NoGlobalsUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as err:
        if str(err).startswith("global "):
            raise FleetlabError(
                f"refused to load '{path}': it holds a Python object ({err}) that could run code when loaded; "
                "JAX checkpoints (skrl-JAX, brax) hold only bytes and plain values"
            ) from None
        raise FleetlabError(f"'{path}' is not a readable checkpoint ({_first_line(err)})") from None
    except Exception as err:
        raise FleetlabError(
            f"'{path}' is not a readable checkpoint (damaged or truncated: {type(err).__name__})"
        ) from None


def writer_of(state: dict) -> str | None:
    """The library whose save format `state` has (the keys of its CheckpointLayout), or None."""
    from fleetlab.rl.library import LIBRARIES, library

    return next((name for name in LIBRARIES if library(name).checkpoint.keys <= set(state)), None)


def check_writer(path: str, state: dict, library: str) -> None:
    """A checkpoint of another library (or of none) is a one-line error naming the one to use."""
    writer = writer_of(state)
    if writer == library:
        return
    if writer is None:
        keys = ", ".join(map(str, list(state)[:6]))
        raise FleetlabError(f"'{path}' is not a {library} checkpoint (it has keys {keys})")
    raise FleetlabError(f"'{path}' was written by {writer}, but {library} was asked to read it: use "
                        f"scripts/reinforcement_learning/{writer}/play.py or --library {writer}")


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
