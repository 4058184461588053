"""skrl-torch: imports skrl at the top, so it is imported only through patches.import_backend, after RunContext made
the process group (skrl calls init_process_group("nccl") and torch.cuda.set_device when imported under
WORLD_SIZE > 1)."""

from __future__ import annotations

import math

import torch
from skrl.agents.torch.ppo import PPO
from skrl.envs.wrappers.torch.base import Wrapper
from skrl.resources.preprocessors.torch import RunningStandardScaler
from skrl.utils.runner.torch import Runner

from fleetlab.distributed import parameter_checksum, sync
from fleetlab.distributed.sync import global_batch_moments
from fleetlab.envs.vec_env import LazyLog
from fleetlab.rl.skrl.agent import fleet_runner
from fleetlab.rl.skrl.env import SkrlEnvMixin


class SkrlTorchEnv(SkrlEnvMixin, Wrapper):
    """Our VecEnv as an skrl torch env: (N, 1) rewards and dones, one reset (the env auto-resets)."""

    def reset(self):
        if self._obs is None:
            self._obs = self._env.observations["policy"]  # built reset; see RlGamesVecEnv.reset
        return self._obs, {}

    def step(self, actions: torch.Tensor):
        obs, reward, terminated, truncated, extras = self._env.step(actions)
        self._obs = obs["policy"]
        self._tick()
        extras = {**extras, "log": _finite_log(extras["log"])}
        return self._obs, reward.view(-1, 1), terminated.view(-1, 1), truncated.view(-1, 1), extras


def _finite_log(log: LazyLog) -> dict[str, torch.Tensor]:
    """skrl's trainer logs each extras["log"] entry as np.mean over its write interval; our env reports an
    episode term as NaN at steps where no episode ended (for nanmean loggers), which would turn the whole mean
    into NaN. Only the finite entries go on, as host scalars: one device read per step for the whole vector,
    where skrl's trainer would `.item()` every key."""
    return {k: torch.tensor(v) for k, v in zip(log.names, log.values.tolist()) if math.isfinite(v)}


class SyncedRunningStandardScaler(RunningStandardScaler):
    """Upstream's RunningStandardScaler updates from each rank's own batch, so the observation/value statistics
    (and the policies that read them) differ across ranks. Here the batch moments are all-reduced first."""

    def _parallel_variance(self, input_mean: torch.Tensor, input_var: torch.Tensor, input_count: int) -> None:
        input_mean, input_var, input_count = global_batch_moments(input_mean, input_var, input_count)
        super()._parallel_variance(input_mean, input_var, input_count)


_build_runner = fleet_runner(Runner, PPO, SyncedRunningStandardScaler)


def build_runner(env, cfg: dict):
    return _build_runner(SkrlTorchEnv(env), cfg)


def checksum(agent) -> str:
    modules = [m for m in agent.checkpoint_modules.values() if hasattr(m, "state_dict")]
    return parameter_checksum([t for m in modules for t in m.state_dict().values()])


def state_checksum(agent) -> str:
    """What skrl's checkpoint holds and load_agent restores: every checkpoint module's state_dict (models,
    optimizer, preprocessors)."""
    return sync.state_checksum({name: m.state_dict() for name, m in agent.checkpoint_modules.items()
                                if hasattr(m, "state_dict")})


def policy_fn(agent):
    agent.enable_training_mode(False, apply_to_models=True)

    def act(obs):
        _, outputs = agent.act(obs, None, timestep=0, timesteps=0)
        return outputs["mean_actions"]

    return act


def rng_extra() -> dict:
    return {}  # skrl-torch draws from torch's RNG, which fault_tolerance.rng_state already holds


def set_rng_extra(_state: dict) -> None:
    pass


def load_agent(agent, modules: dict) -> None:
    """Upstream's Agent.load(path) reads the file itself with torch.load(weights_only=False), which can run code from
    it. The modules come here already read by fleetlab.rl.checkpoint_reader (weights_only=True); each goes into the
    agent's module of that name, as upstream does (load_state_dict moves the tensors to the module's device)."""
    for name, data in modules.items():
        module = agent.checkpoint_modules.get(name)
        if module is not None and hasattr(module, "load_state_dict"):
            module.load_state_dict(data)
            if hasattr(module, "eval"):
                module.eval()
