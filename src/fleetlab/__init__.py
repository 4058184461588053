"""fleetlab: GPU-vectorized MuJoCo MJX robot envs and multi-GPU RL training for rsl_rl, rl_games and skrl."""

import os

# JAX and torch share one GPU: without this JAX grabs 75% of the card at its first call and torch runs out.
# It must be set before jax is imported, which is why it lives at the top of the package.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# Compiled programs are cached on disk: the second run of a task skips most of its JIT time. Every program, not only
# those over JAX's default 1 s: a Brax run also compiles ~50 small ones (network init, optimizer, replication) that
# add up to ~4 s on a GPU. With a size cap JAX also locks the folder around each read and write, which the 2+
# processes of a run writing the same small programs at once need (without it, one can read another's half-written
# file). Capped entries carry an access-time file that uncapped ones lack, and JAX's eviction warns on every write
# when one is missing: hence a folder of its own, not the uncapped `jax` of earlier fleetlab versions.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "fleetlab", "jax-lru"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(4 << 30))  # 4 GiB, least recently used entries go first
# Offscreen video rendering for MuJoCo, chosen when mujoco is imported: EGL on an NVIDIA machine, OSMesa on a CPU
# one, each only if its library is installed (mujoco fails to import with a MUJOCO_GL whose library is missing).
if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
    import ctypes.util

    _gl = "egl" if os.path.exists("/dev/nvidia0") else "osmesa"
    if ctypes.util.find_library("EGL" if _gl == "egl" else "OSMesa"):
        os.environ["MUJOCO_GL"] = _gl
        os.environ.setdefault("PYOPENGL_PLATFORM", _gl)

__version__ = "0.1.0"

from fleetlab.gymnasium_ids import register_ids as _register_gymnasium_ids  # noqa: E402

_register_gymnasium_ids()
