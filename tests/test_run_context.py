"""RunContext reads ranks from torchrun, skrl's JAX launcher and SLURM; seeds, devices and errors."""

import pytest
import torch

from fleetlab.distributed import RunContext
from fleetlab.errors import FleetlabError

TORCHRUN = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29511"}


def test_single_process_defaults():
    ctx = RunContext.from_env(env={}, seed=7, device="cpu")
    assert (ctx.rank, ctx.world_size, ctx.backend, ctx.seed, ctx.is_writer) == (0, 1, None, 7, True)
    assert not ctx.is_distributed


def test_torchrun_variables_gloo_on_cpu_and_seed_uses_global_rank():
    ctx = RunContext.from_env(env=TORCHRUN, distributed=True, seed=10, device="cpu")
    assert (ctx.rank, ctx.local_rank, ctx.world_size, ctx.node_rank) == (3, 1, 4, 1)
    assert ctx.backend == "gloo" and ctx.launcher == "torchrun"
    assert ctx.seed == 13, "seed = base + global RANK (LOCAL_RANK would repeat seeds on every node)"
    assert not ctx.is_writer
    assert ctx.master_port == 29511


def test_jax_launcher_variables():
    env = {"JAX_RANK": "1", "JAX_LOCAL_RANK": "1", "JAX_WORLD_SIZE": "2", "JAX_COORDINATOR_ADDR": "127.0.0.1",
           "JAX_COORDINATOR_PORT": "5555"}
    ctx = RunContext.from_env(env=env, distributed=True, ml_framework="jax", device="cpu", seed=0)
    got = (ctx.rank, ctx.world_size, ctx.backend, ctx.launcher, ctx.master_port, ctx.seed)
    assert got == (1, 2, "jax", "jax", 5555, 1)
    with pytest.raises(FleetlabError, match="--ml_framework jax"):
        RunContext.from_env(env=env, distributed=True, ml_framework="torch", device="cpu")


def test_slurm_variables():
    env = {"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NTASKS": "8", "SLURM_NTASKS_PER_NODE": "4",
           "MASTER_ADDR": "node0", "MASTER_PORT": "1234"}
    ctx = RunContext.from_env(env=env, distributed=True, device="cpu", seed=0)
    assert (ctx.rank, ctx.local_rank, ctx.world_size, ctx.node_rank, ctx.launcher) == (5, 1, 8, 1, "slurm")
    with pytest.raises(FleetlabError, match="MASTER_ADDR"):
        RunContext.from_env(env={k: v for k, v in env.items() if k != "MASTER_ADDR"}, distributed=True, device="cpu")


def test_several_processes_without_distributed_flag_is_refused():
    with pytest.raises(FleetlabError, match="--distributed"):
        RunContext.from_env(env=TORCHRUN, distributed=False, device="cpu")


def test_bad_rank_variables():
    with pytest.raises(FleetlabError, match="not an integer"):
        RunContext.from_env(env={**TORCHRUN, "RANK": "x"}, distributed=True, device="cpu")
    with pytest.raises(FleetlabError, match="inconsistent ranks"):
        RunContext.from_env(env={**TORCHRUN, "RANK": "9"}, distributed=True, device="cpu")


def test_cuda_device_is_local_rank_and_too_few_gpus_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    ctx = RunContext.from_env(env=TORCHRUN, distributed=True, seed=0)
    assert ctx.device == "cuda:1" and ctx.backend == "nccl"
    ctx = RunContext.from_env(env={**TORCHRUN, "LOCAL_RANK": "0"}, distributed=True, device="cuda:1", seed=0)
    assert ctx.device == "cuda:0", "under a launcher each process owns cuda:LOCAL_RANK"
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(FleetlabError, match="LOCAL_RANK=1 needs cuda:1 but only 1 GPU"):
        RunContext.from_env(env=TORCHRUN, distributed=True)


def test_no_cuda_falls_back_to_cpu_but_an_explicit_gpu_request_fails(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert RunContext.from_env(env={}).device == "cpu"
    with pytest.raises(FleetlabError, match="no CUDA GPU"):
        RunContext.from_env(env={}, device="cuda:0")
    with pytest.raises(FleetlabError, match="unknown device"):
        RunContext.from_env(env={}, device="gpu0")


def test_a_jax_workflow_takes_no_gpu_that_jax_was_told_not_to_use(monkeypatch):
    """A JAX workflow asks the CUDA driver, not torch, how many GPUs there are (torch's import is start-up time
    brax never needs); JAX_PLATFORMS without cuda means none, whatever the driver says."""
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # torch's answer must not count for JAX
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert RunContext.from_env(env={}, ml_framework="jax").device == "cpu"
    assert RunContext.from_env(env={}, ml_framework="torch").device == "cuda:0"
    with pytest.raises(FleetlabError, match="jax sees no CUDA GPU"):
        RunContext.from_env(env={}, device="cuda:0", ml_framework="jax")
