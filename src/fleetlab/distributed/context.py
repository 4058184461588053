"""RunContext: who am I, where do I run, how do I talk, what is my seed, do I write files.

This is the ONE place that reads ranks from the environment. It understands torchrun's variables, the variables of
skrl's JAX launcher (`python -m skrl.utils.distributed.jax`) and SLURM's (one srun task per GPU).
"""

from __future__ import annotations

import atexit
import ctypes
import dataclasses
import datetime
import os
from typing import Any, Mapping

from fleetlab.errors import FleetlabError

RUN_DIR_VAR = "FLEETLAB_RUN_DIR"  # set by `fleetlab launch`: every restart of the group trains in this directory


def launched_run_dir() -> str | None:
    """The run directory `fleetlab launch` chose for every worker and every restart, or None outside it."""
    return os.environ.get(RUN_DIR_VAR) or None


def _cuda_device_count(ml_framework: str) -> int:
    """The GPUs this process may use. A JAX workflow asks the CUDA driver (what JAX will see, under the same
    CUDA_VISIBLE_DEVICES) rather than torch: importing torch costs ~3 s of start-up that brax never needs, and
    asking JAX itself would start its backends, which jax.distributed.initialize must precede."""
    if ml_framework != "jax":
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    platforms = os.environ.get("JAX_PLATFORMS", "")
    if platforms and not {"cuda", "gpu"} & set(platforms.split(",")):
        return 0  # JAX was told to use no GPU
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:  # no NVIDIA driver on this machine
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0  # e.g. CUDA_ERROR_NO_DEVICE under CUDA_VISIBLE_DEVICES=""
    return count.value


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise FleetlabError(f"environment variable {name}={value!r} is not an integer") from None


@dataclasses.dataclass
class RunContext:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    local_world_size: int = 1
    launcher: str = "single"  # "single" | "torchrun" | "jax" | "slurm"
    device: str = "cpu"
    backend: str | None = None  # "nccl" | "gloo" | "jax" | None for a single process
    seed: int = 42
    master_addr: str | None = None
    master_port: int | None = None
    timeout_s: float = 600.0

    # -- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_env(
        cls,
        *,
        distributed: bool = False,
        device: str | None = None,
        seed: int = 42,
        ml_framework: str = "torch",
        timeout_s: float = 600.0,
        env: Mapping[str, str] | None = None,
    ) -> "RunContext":
        """Read the launcher's variables. `distributed` is Isaac Lab's --distributed flag: a launch with several
        processes but without it is refused, since each process would silently train its own copy."""
        env = os.environ if env is None else env
        if "JAX_WORLD_SIZE" in env or "JAX_RANK" in env:
            launcher, prefix = "jax", "JAX_"
            rank, local_rank = _int(env, "JAX_RANK", 0), _int(env, "JAX_LOCAL_RANK", 0)
            world_size = _int(env, "JAX_WORLD_SIZE", 1)
            local_world_size = _int(env, "JAX_LOCAL_WORLD_SIZE", world_size)
            addr, port = env.get("JAX_COORDINATOR_ADDR", "127.0.0.1"), _int(env, "JAX_COORDINATOR_PORT", 1234)
        elif "WORLD_SIZE" in env or "RANK" in env:
            launcher, prefix = "torchrun", ""
            rank, local_rank = _int(env, "RANK", 0), _int(env, "LOCAL_RANK", 0)
            world_size = _int(env, "WORLD_SIZE", 1)
            local_world_size = _int(env, "LOCAL_WORLD_SIZE", world_size)
            addr, port = env.get("MASTER_ADDR"), _int(env, "MASTER_PORT", 29500)
        elif "SLURM_PROCID" in env and _int(env, "SLURM_NTASKS", 1) > 1:
            launcher, prefix = "slurm", "SLURM_"
            rank, local_rank = _int(env, "SLURM_PROCID", 0), _int(env, "SLURM_LOCALID", 0)
            world_size = _int(env, "SLURM_NTASKS", 1)
            local_world_size = _int(env, "SLURM_NTASKS_PER_NODE", 1)
            addr, port = env.get("MASTER_ADDR"), _int(env, "MASTER_PORT", 29500)
            if distributed and world_size > 1 and not addr:
                raise FleetlabError("SLURM launch: export MASTER_ADDR (the first node of the job) and MASTER_PORT")
        else:
            launcher, prefix = "single", ""
            rank = local_rank = 0
            world_size = local_world_size = 1
            addr, port = None, None

        if world_size < 1 or not 0 <= rank < world_size or not 0 <= local_rank < world_size:
            raise FleetlabError(f"inconsistent ranks: {prefix}RANK={rank}, LOCAL_RANK={local_rank}, "
                                f"WORLD_SIZE={world_size}")
        if world_size > 1 and not distributed:
            raise FleetlabError(
                f"{world_size} processes were launched but --distributed was not given: add --distributed "
                "(without it every process would train its own independent copy)"
            )
        if launcher == "jax" and ml_framework != "jax":
            raise FleetlabError("launched by the JAX launcher: train a JAX workflow (--library brax, or --library skrl "
                                "--ml_framework jax), or launch with torchrun")
        if not distributed:
            launcher = "single"

        resolved = cls._resolve_device(device, local_rank, launched=launcher != "single", ml_framework=ml_framework)
        # A launched run gets its process group even with one process (torchrun --nproc_per_node=1), so the
        # backend (nccl on CUDA) is exercised exactly as it will be with more.
        if launcher == "jax":
            backend = "jax"
        elif launcher != "single":
            backend = "nccl" if resolved.startswith("cuda") else "gloo"
        else:
            backend = None
        return cls(
            rank=rank,
            local_rank=local_rank,
            world_size=world_size,
            local_world_size=local_world_size,
            launcher=launcher,
            device=resolved,
            backend=backend,
            # global rank: LOCAL_RANK would give every node the same seeds; kept in the 32 bits every library's
            # seeding accepts (--seed may be up to 2**32 - 1)
            seed=(seed + rank) % 2**32,
            master_addr=addr,
            master_port=port,
            timeout_s=timeout_s,
        )

    @staticmethod
    def _resolve_device(device: str | None, local_rank: int, launched: bool, ml_framework: str) -> str:
        if device is not None and device != "cpu" and not device.startswith("cuda"):
            raise FleetlabError(f"unknown device '{device}': use 'cpu', 'cuda' or 'cuda:K'")
        if device == "cpu":
            return "cpu"
        count = _cuda_device_count(ml_framework)
        if count == 0:
            if device is not None:
                raise FleetlabError(f"device '{device}' was asked for but {ml_framework} sees no CUDA GPU; "
                                    "use --device cpu")
            return "cpu"
        # Under a launcher each process owns GPU LOCAL_RANK (as in Isaac Lab, an explicit cuda:K is overridden).
        index = local_rank if launched or device in (None, "cuda") else int(device.split(":")[1])
        if index >= count:
            raise FleetlabError(
                f"process with LOCAL_RANK={local_rank} needs cuda:{index} but only {count} GPU(s) are visible "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}): "
                "start at most as many processes per node as there are GPUs"
            )
        return f"cuda:{index}"

    # -- properties ---------------------------------------------------------------------------------------------

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1 and self.launcher != "single"

    @property
    def is_writer(self) -> bool:
        """Only global rank 0 writes logs, checkpoints and videos."""
        return self.rank == 0

    @property
    def node_rank(self) -> int:
        return self.rank // max(self.local_world_size, 1)

    # -- process group ------------------------------------------------------------------------------------------

    def init_process_group(self) -> "RunContext":
        """Start torch.distributed (nccl on CUDA, gloo on CPU), or jax.distributed for skrl-JAX. Torn down at exit."""
        if self.backend is None:
            return self
        if self.backend == "jax":
            from fleetlab.distributed import jax_dist

            jax_dist.initialize(f"{self.master_addr}:{self.master_port}", self.world_size, self.rank, self.local_rank,
                                on_gpu=self.device.startswith("cuda"), timeout_s=self.timeout_s)
            atexit.register(jax_dist.shutdown)
            return self
        import torch.distributed as dist

        if dist.is_initialized():
            return self
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.set_device(self.device)  # only for nccl: on CPU there is no device to set
        kwargs: dict[str, Any] = {}
        if self.launcher == "slurm":
            kwargs["init_method"] = f"tcp://{self.master_addr}:{self.master_port}"
            # rl_games and skrl read torchrun's variables themselves; give them the same ranks.
            os.environ.update(RANK=str(self.rank), LOCAL_RANK=str(self.local_rank), WORLD_SIZE=str(self.world_size))
        dist.init_process_group(
            backend=self.backend,
            rank=self.rank,
            world_size=self.world_size,
            timeout=datetime.timedelta(seconds=self.timeout_s),
            **kwargs,
        )
        atexit.register(self.destroy)
        return self

    def destroy(self) -> None:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's value of `obj`, on every rank (e.g. the run directory name that rank 0 chose)."""
        if not self.is_distributed:
            return obj
        if self.backend == "jax":
            from fleetlab.distributed.jax_dist import broadcast_object

            return broadcast_object(obj)
        import torch.distributed as dist

        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def all_gather_object(self, obj: Any) -> list:
        """Every rank's `obj`, in rank order, on every rank."""
        if not self.is_distributed:
            return [obj]
        if self.backend == "jax":
            from fleetlab.distributed.jax_dist import all_gather_object

            return all_gather_object(obj)
        import torch.distributed as dist

        out: list = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def summary(self) -> str:
        return (
            f"rank {self.rank}/{self.world_size} (local {self.local_rank}, node {self.node_rank}) on {self.device}, "
            f"backend={self.backend}, launcher={self.launcher}, seed={self.seed}"
        )
