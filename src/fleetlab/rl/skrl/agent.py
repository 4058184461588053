"""What fleetlab adds to skrl's PPO agent (torch and JAX alike), as methods of a subclass that skrl's runner builds
(torch_backend.FleetPPO, jax_backend.FleetPPO). skrl's trainer calls them on every rank with the timestep:
- a resumed run starts its trainer at 0, so the agent is handed timestep + offset (and the full total);
- upstream writes checkpoints with torch.save / open(path, "wb") straight to the final name, so a kill mid-write
  leaves a truncated file: here they are written into a staging folder and renamed into place once complete;
- every rank's RNG state is gathered at checkpoint timesteps and written by rank 0 as fleetlab_<t>.pt right after
  skrl's agent_<t> file: that pair is a complete checkpoint;
- SIGINT/SIGTERM, checked at rollout boundaries on all ranks, end training after a checkpoint;
- upstream tracks episode returns and lengths on rank 0 only (it zeroes write_interval on the other ranks, and
  record_transition tracks nothing then): every rank tracks here, and the TensorBoard scalars rank 0 writes are
  pooled over every rank's samples (skrl-JAX also gets the env's Episode_Reward/* and Episode_Termination/*).
Without a `TrainingState` (playing) the agent behaves as upstream's."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

from fleetlab.distributed import RunContext, pooled_over_ranks
from fleetlab.process import StopRequest
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import STATE_CHECKSUM_KEY


@dataclasses.dataclass
class TrainingState:
    ctx: RunContext
    env: object
    task_id: str
    offset: int  # timesteps done before this (resumed) run
    total: int  # timesteps of the whole run
    rollouts: int
    interval: int  # checkpoint interval in timesteps (skrl zeroes its own on ranks > 0)
    rng_extra: Callable[[], dict]  # the framework's own RNG state (skrl-JAX's key)
    state_checksum: Callable[[], str]  # the hash of what the checkpoint holds (session.SkrlSession.state_checksum)
    env_log: Callable[[], dict] | None = None  # the env's extras["log"] samples, where skrl's trainer logs none
    stop: StopRequest = dataclasses.field(default_factory=StopRequest)  # the process's, given to learn()
    rng_states: list[dict] | None = None


class FleetAgentMixin:
    fleet: TrainingState | None = None  # set by session.SkrlSession when training

    def _shift(self, timestep: int) -> dict:
        if self.fleet is None:
            return {"timestep": timestep}
        return {"timestep": timestep + self.fleet.offset, "timesteps": self.fleet.total}

    def pre_interaction(self, *, timestep: int, timesteps: int) -> None:
        super().pre_interaction(**{"timesteps": timesteps, **self._shift(timestep)})

    def act(self, *args, timestep: int, timesteps: int, **kwargs):
        return super().act(*args, **{"timesteps": timesteps, **self._shift(timestep)}, **kwargs)

    def record_transition(self, *args, timestep: int, timesteps: int, **kwargs) -> None:
        super().record_transition(*args, **{"timesteps": timesteps, **self._shift(timestep)}, **kwargs)

    def post_interaction(self, *, timestep: int, timesteps: int) -> None:
        fleet = self.fleet
        if fleet is None:
            return super().post_interaction(timestep=timestep, timesteps=timesteps)
        t = timestep + fleet.offset + 1  # skrl's own +1: the number of steps done
        signum = fleet.stop.agreed(fleet.ctx) if t % fleet.rollouts == 0 else 0
        if signum or (fleet.interval and t % fleet.interval == 0):
            fleet.rng_states = ft.gather_rng(fleet.ctx, fleet.env, fleet.rng_extra())
        super().post_interaction(timestep=t - 1, timesteps=fleet.total)
        if signum:
            if fleet.ctx.is_writer:
                self.write_checkpoint(timestep=t, timesteps=fleet.total)
            raise ft.GracefulStop(signum, os.path.join(self.experiment_dir, "checkpoints", f"agent_{t}"))

    def write_tracking_data(self, *, timestep: int, timesteps: int) -> None:
        fleet = self.fleet
        if fleet is None:
            return super().write_tracking_data(timestep=timestep, timesteps=timesteps)
        if fleet.env_log is not None:
            for key, values in fleet.env_log().items():
                self.tracking_data[key].extend(v for v in values if v == v)  # NaN: no episode ended that step
            for key in [k for k, v in self.tracking_data.items() if not v]:
                del self.tracking_data[key]
        if not fleet.ctx.is_distributed:
            return super().write_tracking_data(timestep=timestep, timesteps=timesteps)
        pooled = pooled_over_ranks(fleet.ctx, self.tracking_data)  # every rank calls this at the same timestep
        self.tracking_data.clear()
        if fleet.ctx.is_writer:
            self.tracking_data.update({key: [value] for key, value in pooled.items()})
            return super().write_tracking_data(timestep=timestep, timesteps=timesteps)
        self._track_rewards.clear()  # what upstream's write_tracking_data resets, on a rank that has no writer
        self._track_timesteps.clear()

    def write_checkpoint(self, *, timestep: int, timesteps: int) -> None:
        if self.fleet is None:
            return super().write_checkpoint(timestep=timestep, timesteps=timesteps)
        final = os.path.join(self.experiment_dir, "checkpoints")
        staging = os.path.join(final, ".writing")  # upstream writes into <experiment_dir>/checkpoints/
        os.makedirs(os.path.join(staging, "checkpoints"), exist_ok=True)
        experiment_dir, self.experiment_dir = self.experiment_dir, staging
        try:
            super().write_checkpoint(timestep=timestep, timesteps=timesteps)
        finally:
            self.experiment_dir = experiment_dir
        for name in os.listdir(os.path.join(staging, "checkpoints")):
            ft.move_into_place(os.path.join(staging, "checkpoints", name), os.path.join(final, name))
        ft.atomic_torch_save({"timestep": timestep, "rng": self.fleet.rng_states, "task": self.fleet.task_id,
                              STATE_CHECKSUM_KEY: self.fleet.state_checksum()},
                             os.path.join(final, f"fleetlab_{timestep}.pt"))


def fleet_runner(runner_cls: type, ppo_cls: type, synced_scaler: type) -> Callable:
    """build_runner(wrapped_env, cfg) for one framework: skrl's runner building FleetAgentMixin + ppo_cls where the
    config says PPO, and our all-reduced scaler where it says RunningStandardScaler (upstream updates it from each
    rank's own batch, so the statistics, and the policies that read them, differ across ranks)."""
    fleet_ppo = type(f"Fleet{ppo_cls.__name__}", (FleetAgentMixin, ppo_cls), {})

    class FleetRunner(runner_cls):
        def _component(self, name: str):
            return fleet_ppo if name.lower() == "ppo" else super()._component(name)

    def build_runner(wrapped, cfg: dict):
        for key in ("observation_preprocessor", "state_preprocessor", "value_preprocessor"):
            if cfg["agent"].get(key) == "RunningStandardScaler":
                cfg["agent"][key] = synced_scaler
        return FleetRunner(wrapped, cfg), wrapped

    return build_runner
