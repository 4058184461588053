"""skrl-JAX: imports skrl at the top, so it is imported only through patches.import_backend, after RunContext ran
jax.distributed.initialize (skrl calls it again when imported, which fails)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import skrl
from skrl.agents.jax.ppo import PPO
from skrl.envs.wrappers.jax.base import Wrapper
from skrl.resources.preprocessors.jax import RunningStandardScaler
from skrl.utils.runner.jax import Runner

from fleetlab.distributed import parameter_checksum, sync
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.skrl.agent import fleet_runner
from fleetlab.rl.skrl.env import SkrlEnvMixin


class CachedPmapJax:
    """Stands in for the `jax` module inside skrl's model base and PPO modules. Upstream builds
    `jax.pmap(lambda x: jax.lax.psum(x, "i"), ...)` anew on every call (reduce_parameters each minibatch, the KL
    each epoch), which recompiles every time (seen: 900 compiles against 116). The same closure-free code is
    pmapped once here."""

    def __init__(self):
        self.cache: dict = {}

    def __getattr__(self, name):
        return getattr(jax, name)

    def pmap(self, fun, **kwargs):
        if getattr(fun, "__closure__", None) is not None:
            return jax.pmap(fun, **kwargs)
        key = (fun.__code__, tuple(sorted(kwargs.items())))
        if key not in self.cache:
            self.cache[key] = jax.pmap(fun, **kwargs)
        return self.cache[key]


def _psum(x):
    return jax.lax.psum(x, "i")


_psum_across_processes = jax.pmap(_psum, axis_name="i")


class SyncedRunningStandardScaler(RunningStandardScaler):
    """Upstream updates the statistics from each process's own batch, so they differ across processes. Here the
    batch moments are summed over all processes first, and every process applies the same update."""

    def __call__(self, x, *, train: bool = False, inverse: bool = False):
        if train and x is not None and skrl.config.jax.is_distributed:
            flat = x.reshape(-1, x.shape[-1])
            n = jnp.asarray([flat.shape[0]], jnp.float32)
            moments = jnp.concatenate([flat.sum(0), (flat**2).sum(0), n])
            moments = _psum_across_processes(moments[None])[0]
            size = flat.shape[-1]
            total = moments[-1]
            mean = moments[:size] / total
            var = (moments[size : 2 * size] - total * mean**2) / jnp.maximum(total - 1, 1)  # ddof=1, as upstream
            self._parallel_variance(mean, var, total)
            train = False
        return super().__call__(x, train=train, inverse=inverse)


class SkrlJaxEnv(SkrlEnvMixin, Wrapper):
    """Our VecEnv as an skrl JAX env: the env's own JAX arrays, no torch hop; (N, 1) rewards and dones."""

    def reset(self):
        if self._obs is None:
            self._obs = self._unwrapped.state.obs  # built reset; see RlGamesVecEnv.reset
        return self._obs, {}

    log_rows: list | None = None  # a list while training: the env's per-step extras["log"] rows (see drain_log)

    def step(self, actions):
        obs, reward, terminated, truncated, extras = self._unwrapped.step_jax(actions)
        self._obs = obs
        self._tick()
        if self.log_rows is not None:
            self.log_rows.append(extras["log"].values)  # stays on the device until drain_log
        return obs, reward.reshape(-1, 1), terminated.reshape(-1, 1), truncated.reshape(-1, 1), extras

    def drain_log(self) -> dict[str, list[float]]:
        """The env's Episode_Reward/* and Episode_Termination/* rows since the last call, one read for all of
        them. skrl's JAX trainer, unlike its torch one, never logs the env's info (`environment_info`)."""
        if not self.log_rows:
            return {}
        rows = np.stack(jax.device_get(self.log_rows))  # one transfer, and no XLA program for the stack
        self.log_rows.clear()
        return {name: rows[:, i].tolist() for i, name in enumerate(self._unwrapped.log_names)}


_build_runner = fleet_runner(Runner, PPO, SyncedRunningStandardScaler)


def build_runner(env, cfg: dict):
    skrl.config.jax.backend = "jax"  # arrays stay JAX arrays on the device (Isaac Lab sets the same)
    skrl.config.jax.device = env.core.physics.device  # the env's device: the one local to this process
    return _build_runner(SkrlJaxEnv(env), cfg)


def checksum(agent) -> str:
    leaves = []
    for name in ("policy", "value"):
        model = agent.models.get(name)
        if model is not None:
            leaves += jax.tree.leaves(model.state_dict.params)
    for pre in (agent._observation_preprocessor, agent._value_preprocessor):
        if isinstance(pre, RunningStandardScaler):
            leaves += [pre.running_mean, pre.running_variance]
    return parameter_checksum([np.asarray(x) for x in leaves])


def state_checksum(agent) -> str:
    """What skrl's checkpoint holds and load_agent restores: each checkpoint module's state_dict.params (models,
    optimizers, preprocessors), as upstream's write_checkpoint serializes them."""
    values = {name: [np.asarray(x) for x in jax.tree.leaves(m.state_dict.params)]
              for name, m in agent.checkpoint_modules.items() if hasattr(m, "state_dict")}
    return sync.state_checksum(values)


def policy_fn(agent):
    import torch

    from fleetlab.envs import to_jax, to_torch

    agent.enable_training_mode(False, apply_to_models=True)

    def act(obs):
        _, outputs = agent.act(to_jax(obs), None, timestep=0, timesteps=0)
        return to_torch(jnp.asarray(outputs["mean_actions"])).to(torch.float32)

    return act


def rng_extra() -> dict:
    return {"skrl_jax_key": ft.key_to_tensor(skrl.config.jax.key)}  # skrl's uint32 PRNG key for action sampling


def set_rng_extra(state: dict) -> None:
    if "skrl_jax_key" in state:  # a jax.Array: kept as is (a NumPy one is re-seeded)
        skrl.config.jax.key = jnp.asarray(ft.key_from_tensor(state["skrl_jax_key"]))


def load_agent(agent, modules: dict) -> None:
    """Upstream's Agent.load(path) unpickles the file itself, with pickle.load (which can run code from it). The
    modules come here already read by fleetlab.rl.checkpoint_reader (no globals allowed): each is flax's msgpack
    bytes of a model's parameters, restored as upstream restores them."""
    import flax.serialization

    for name, data in modules.items():
        module = agent.checkpoint_modules.get(name)
        if module is not None and hasattr(module, "state_dict"):
            params = flax.serialization.from_bytes(module.state_dict.params, data)
            module.state_dict = module.state_dict.replace(params=params)
