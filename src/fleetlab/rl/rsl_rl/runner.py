"""rsl_rl's OnPolicyRunner with its distributed gaps fixed: ranks, device and process group from our RunContext
(gloo on CPU), the synced logger, fused Adam on CUDA, atomic checkpoints with every rank's RNG state, a graceful
stop agreed by all ranks, and checkpoints read without running code from them."""

from __future__ import annotations

import contextlib
import logging
import os
import warnings

import torch
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from fleetlab.distributed import RunContext, parameter_checksum, state_checksum
from fleetlab.process import StopRequest
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.checkpoint_reader import read_checkpoint
from fleetlab.rl.console import printed_by_writer_only
from fleetlab.rl.library import STATE_CHECKSUM_KEY
from fleetlab.rl.rsl_rl.logger import SyncedLogger

LIBRARY = "rsl_rl"


class FleetOnPolicyRunner(OnPolicyRunner):
    """OnPolicyRunner that takes its ranks, device and process group from our RunContext, writes atomic
    checkpoints that carry every rank's RNG state, and stops gracefully on SIGINT/SIGTERM."""

    def __init__(self, env, train_cfg: dict, log_dir: str | None, ctx: RunContext):
        self.ctx = ctx
        # Upstream's check_nan runs three `.any()` host syncs per env step, which stop the CPU from queuing the
        # next step while the GPU works. Our VecEnv checks actions, observations and rewards itself, on every
        # 16th step on a GPU (VecEnv._check_finite). An explicit `check_for_nan` in the config still wins.
        train_cfg.setdefault("check_for_nan", False)
        with printed_by_writer_only(ctx):  # upstream prints the model summary on every rank
            super().__init__(env, train_cfg, log_dir=log_dir, device=ctx.device)
        self._use_fused_optimizer()
        self.logger = SyncedLogger(
            log_dir=log_dir, cfg=self.cfg, env_cfg=env.cfg, num_envs=env.num_envs, is_distributed=self.is_distributed,
            gpu_world_size=self.gpu_world_size, gpu_global_rank=self.gpu_global_rank, device=self.device, ctx=ctx,
            iteration_end=self._iteration_end,
        )
        self.stop = StopRequest()  # the process's, given to learn()
        self.rng_states: list[dict] | None = None
        self.task_id: str | None = None

    def _use_fused_optimizer(self) -> None:
        # Upstream builds torch.optim.Adam with its defaults (the multi-tensor "foreach" kernels). The PPO update
        # of a small MLP is launch-bound, so on CUDA the single-kernel fused Adam is used: same maths, same
        # state_dict format (checkpoints load either way).
        opt = self.alg.optimizer
        if torch.device(self.device).type != "cuda" or type(opt) not in (torch.optim.Adam, torch.optim.AdamW):
            return
        group = {k: v for k, v in opt.param_groups[0].items() if k not in ("params", "foreach", "fused")}
        params = [p for g in opt.param_groups for p in g["params"]]
        self.alg.optimizer = type(opt)(params, **group, fused=True)

    def _iteration_end(self, it: int, total_it: int) -> None:
        # Called on EVERY rank after each iteration's update (upstream saves on rank 0 only, right after).
        signum = self.stop.agreed(self.ctx)
        if signum or it % self.cfg["save_interval"] == 0 or it == total_it - 1:
            self.rng_states = ft.gather_rng(self.ctx, self.env.env)
        if signum:
            path = os.path.join(self.logger.log_dir, f"model_{it}.pt") if self.logger.log_dir else None
            if self.logger.writer is not None:
                self.save(path)
            raise ft.GracefulStop(signum, path)

    def _configure_multi_gpu(self) -> None:
        # Upstream hard-codes init_process_group("nccl"), raises unless device == cuda:LOCAL_RANK and calls
        # torch.cuda.set_device: it cannot run on CPU. RunContext already made the group (gloo on CPU).
        self.is_distributed = self.ctx.is_distributed
        self.gpu_world_size = self.ctx.world_size if self.is_distributed else 1
        self.gpu_global_rank = self.ctx.rank if self.is_distributed else 0
        self.gpu_local_rank = self.ctx.local_rank if self.is_distributed else 0
        self.cfg["multi_gpu"] = (
            {"global_rank": self.ctx.rank, "local_rank": self.ctx.local_rank, "world_size": self.ctx.world_size}
            if self.is_distributed
            else None
        )

    def save(self, path: str, infos: dict | None = None) -> None:
        state = self.alg.save()
        state[STATE_CHECKSUM_KEY] = state_checksum(state)  # weights, normalizers, optimizer: what load() restores
        state["iter"] = self.current_learning_iteration
        state["infos"] = infos
        state["task"] = self.task_id
        state["fleetlab_rng"] = self.rng_states  # every rank's, gathered at this iteration
        ft.atomic_torch_save(state, path)
        self.logger.save_model(path, self.current_learning_iteration)

    def load(self, path: str, load_cfg: dict | None = None, strict: bool = True) -> dict:
        """Upstream reads the file with torch.load(weights_only=False), which can run code from it. Here it is read
        by fleetlab.rl.checkpoint_reader (weights_only=True, and it must be an rsl_rl checkpoint)."""
        loaded = read_checkpoint(path, LIBRARY)
        self.load_checkpoint(loaded, load_cfg, strict)
        return loaded

    def load_checkpoint(self, loaded: dict, load_cfg: dict | None = None, strict: bool = True) -> None:
        """A checkpoint already read by checkpoint_reader, handed to PPO.load as upstream does (load_state_dict
        copies the CPU tensors to the model's device)."""
        if self.alg.load(loaded, load_cfg, strict):
            self.current_learning_iteration = loaded["iter"]

    def checksum(self) -> str:
        return parameter_checksum([*self.alg.actor.state_dict().values(), *self.alg.critic.state_dict().values()])

    def state_checksum(self) -> str:
        return state_checksum(self.alg.save())


@contextlib.contextmanager
def quiet_onnx_export():
    """torch's ONNX exporter logs a warning per torchvision operator when torchvision is not installed (we use none)
    and raises a FutureWarning from inside torch's own pytree code: neither is about the user's policy."""
    registration = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = registration.level
    registration.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*treespec, LeafSpec", category=FutureWarning)
            yield
    finally:
        registration.setLevel(level)


def as_obs_policy(policy, env):
    """rsl_rl's inference policy (TensorDict in) as a function of the policy observations."""
    return lambda obs: policy(TensorDict({"policy": obs}, batch_size=[obs.shape[0]]))
