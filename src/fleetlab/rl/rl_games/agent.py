"""rl_games' A2C agent and player with their distributed gaps fixed: the process group and device from our RunContext,
normalizers fed with every rank's batch, atomic checkpoints with every rank's RNG state, a
graceful stop agreed by all ranks, and checkpoints read without running code from them."""

from __future__ import annotations

import os

import torch
from rl_games.algos_torch import a2c_continuous, players
from rl_games.algos_torch.running_mean_std import RunningMeanStd

from fleetlab.distributed import RunContext
from fleetlab.distributed.sync import global_batch_moments, state_checksum
from fleetlab.distributed.torch_pg import group_made_by_run_context
from fleetlab.process import StopRequest
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.checkpoint_reader import read_checkpoint
from fleetlab.rl.console import printed_by_writer_only
from fleetlab.rl.library import STATE_CHECKSUM_KEY

LIBRARY = "rl_games"


class SyncedRunningMeanStd(RunningMeanStd):
    """Upstream's RunningMeanStd updates from each rank's own batch, so the obs/value normalizers drift apart
    across ranks (and so do the policies that read them). Here the batch moments are all-reduced first: every rank
    applies the same update, computed from the union of all ranks' batches."""

    def _update_mean_var_count_from_moments(self, mean, var, count, batch_mean, batch_var, batch_count: int):
        batch_mean, batch_var, batch_count = global_batch_moments(batch_mean, batch_var, batch_count)
        return super()._update_mean_var_count_from_moments(mean, var, count, batch_mean, batch_var, batch_count)


def _synced_copy(module: torch.nn.Module) -> SyncedRunningMeanStd:
    synced = SyncedRunningMeanStd(tuple(module.insize) if hasattr(module, "insize") else module.running_mean.shape)
    synced.load_state_dict(module.state_dict())
    return synced.to(module.running_mean.device)


class PinnedDeviceConfig(dict):
    """Upstream A2CBase rewrites config['device'] to 'cuda:LOCAL_RANK' under multi_gpu, even on a CPU run. This
    config keeps the device that RunContext chose."""

    def __setitem__(self, key, value):
        if key == "device" and "device" in self:
            return
        super().__setitem__(key, value)


class FleetA2CAgent(a2c_continuous.A2CAgent):
    """Upstream calls dist.init_process_group("nccl") in A2CBase.__init__ and torch.cuda.set_device in train():
    neither works on CPU, so both run inside group_made_by_run_context. Checkpoints are atomic and carry every
    rank's RNG state; SIGINT/SIGTERM stop training after a checkpoint."""

    def __init__(self, base_name, params, ctx: RunContext, env):
        device = ctx.device
        self.ctx, self.fleet_env = ctx, env
        self.stop, self.rng_states = StopRequest(), None  # stop: the process's, given to learn()
        with group_made_by_run_context(device), printed_by_writer_only(ctx):  # upstream: summary on every rank
            super().__init__(base_name=base_name, params=params)
        model = self.model
        if self.normalize_input:
            model.running_mean_std = _synced_copy(model.running_mean_std)
        if self.normalize_value:
            model.value_mean_std = _synced_copy(model.value_mean_std)
            self.value_mean_std = model.value_mean_std
        self._fleet_device = device

    def train(self):
        with group_made_by_run_context(self._fleet_device):
            return super().train()

    def train_epoch(self):
        # Keep this rank's own training FPS per epoch (upstream prints rank 0's only), for `fleetlab bench`.
        out = super().train_epoch()
        self.fleet_train_fps = getattr(self, "fleet_train_fps", []) + [self.curr_frames / out[3]]
        if hasattr(self.algo_observer, "pool"):  # observer.EpisodeLogObserver: every rank's episodes
            self.algo_observer.pool()
        # Upstream saves on rank 0 only, after this returns, at epochs only rank 0 knows (best reward): gather
        # every rank's RNG state each epoch, so any checkpoint carries the current one.
        signum = self.stop.agreed(self.ctx)
        self.rng_states = ft.gather_rng(self.ctx, self.fleet_env)
        if signum:
            path = os.path.join(self.nn_dir, f"last_{self.config['name']}_ep_{self.epoch_num}_stopped")
            if self.global_rank == 0:
                self.save(path)
            raise ft.GracefulStop(signum, path + ".pth")
        return out

    def save(self, fn):
        # Upstream torch.save()s straight to the final name: a kill mid-write leaves a truncated checkpoint.
        state = self.get_full_state_weights()
        state[STATE_CHECKSUM_KEY] = training_state_checksum(self)
        state["fleetlab_rng"] = self.rng_states
        ft.atomic_torch_save(state, fn + ".pth")


class FleetPlayer(players.PpoPlayerContinuous):
    """Upstream's player reads the checkpoint with torch.load(weights_only=False) (torch_ext.safe_load), which can
    run code from it: this one reads it with checkpoint_reader (weights_only=True, written by rl_games)."""

    def restore(self, fn):
        self.restore_checkpoint(read_checkpoint(fn, LIBRARY))

    def restore_checkpoint(self, checkpoint: dict) -> None:
        checkpoint = without_compile_prefix(checkpoint)
        self.model.load_state_dict(checkpoint["model"])
        if self.normalize_input and "running_mean_std" in checkpoint:
            self.model.running_mean_std.load_state_dict(checkpoint["running_mean_std"])


def training_state_checksum(agent) -> str:
    """What set_full_state_weights restores for training: the model (with its normalizers), the optimizer, and the
    epoch and frame counters."""
    return state_checksum({"model": agent.model.state_dict(), "optimizer": agent.optimizer.state_dict(),
                           "epoch": agent.epoch_num, "frame": agent.frame})


def without_compile_prefix(checkpoint: dict) -> dict:
    """A model saved after torch.compile has its keys under "_orig_mod." (upstream's load_checkpoint strips it too)."""
    checkpoint["model"] = {k.removeprefix("_orig_mod."): v for k, v in checkpoint["model"].items()}
    return checkpoint
