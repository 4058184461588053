"""The stateful shell around the functional core: one batch of envs on one device, with torch and JAX views.

The jitted step takes the batched State (donated, so XLA reuses its buffers) and the actions, and returns the next
State plus ONE packed array [obs | reward | terminated | truncated] and one small log vector. Torch sees those
through DLPack without a copy, so a step costs one array in and two out across the framework boundary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.distributed.sync import state_checksum
from fleetlab.envs.core import Env, State
from fleetlab.errors import FleetlabError
from fleetlab.sim.mjx import warp_overflow_error

if TYPE_CHECKING:
    import torch

# torch is imported where a torch view is made, not here: a JAX workflow (brax) builds this env without ever
# stepping its torch view, and importing torch would add ~3 s to its start-up.


def to_torch(array: jax.Array) -> torch.Tensor:
    """Zero-copy JAX -> torch (same device)."""
    import torch

    return torch.from_dlpack(array)


def to_jax(tensor: torch.Tensor) -> jax.Array:
    """Zero-copy torch -> JAX (same device). DLPack needs a contiguous tensor."""
    return jax.dlpack.from_dlpack(tensor.detach().contiguous())


def seconds_since_process_start() -> float:
    import psutil

    return time.time() - psutil.Process().create_time()


class LazyLog(Mapping):
    """extras["log"]: one small array (JAX or torch), indexed only when a key is read. An eager index per key and
    step would cost more than the step; a logger that knows this class keeps `values` whole and reads it once per
    iteration."""

    def __init__(self, names: list[str], values):
        self._index = {n: i for i, n in enumerate(names)}
        self._values = values

    @property
    def names(self) -> list[str]:
        return list(self._index)

    @property
    def values(self):
        return self._values

    def __getitem__(self, key: str) -> jax.Array:
        return self._values[self._index[key]]

    def __iter__(self):
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


class VecEnv(gymnasium.Env):
    """`num_envs` copies of one task, stepped together on `device` ("cpu" or "cuda:K").

    A gymnasium.Env so that `gymnasium.make(task_id, num_envs=...)` works, as with Isaac Lab's envs; like those,
    it is already vectorized and its spaces follow Isaac Lab's (`single_*` per env, batched otherwise).
    """

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": "same-step"}

    def __init__(self, env: Env, num_envs: int, seed: int = 0, device: str = "cpu"):
        self.core = env
        self.cfg = env.cfg
        self.num_envs = num_envs
        self.device = device
        self.num_actions = env.num_actions
        self.num_obs = env.num_obs  # the policy group's size
        self.max_episode_length = env.max_episode_length
        self.max_episode_length_s = env.cfg.episode_length_s
        self.step_dt = env.dt
        self.seed = seed
        self._groups = {slot.group: env.observations.group_slice(slot.group) for slot in env.obs_layout}
        # where each group lies in the flat obs, worked out once: a slice, or {term: slice} for a group that does not
        # concatenate its terms (the torch view slices by it on every step)
        self._obs_plan = {group: span if env.observations.groups[group].concatenate_terms else
                          {s.term: slice(s.start, s.stop) for s in env.obs_layout if s.group == group}
                          for group, span in self._groups.items()}
        self.single_observation_space = gymnasium.spaces.Dict(
            {group: gymnasium.spaces.Box(-np.inf, np.inf, (s.stop - s.start,), np.float32)
             for group, s in self._groups.items()}
        )
        self.single_action_space = gymnasium.spaces.Box(-np.inf, np.inf, (self.num_actions,), np.float32)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self.log_names = ([f"Episode_Reward/{n}" for n in env.reward_names] + env.step_log_names
                          + [f"Curriculum/{n}" for n in env.curriculum.names])
        self._num_terminations = len(env.terminations.names)
        # called after every step (torch or JAX view), e.g. rl/video.py's videos during training
        self.step_hooks: list[Callable[[], None]] = []
        self._jax_device = env.physics.device
        self._reset_fn = jax.jit(jax.vmap(env.init))
        self._step_fn = jax.jit(self._step_packed, donate_argnums=0)
        self._step_jax_fn = jax.jit(self._step_unpacked, donate_argnums=0)
        self.state: State = None  # type: ignore[assignment]
        self.compile_s: float | None = None  # wall time of the first step (XLA compile), for benchmarks
        self._steps = 0
        self._reset_state()
        self.startup_s = seconds_since_process_start()  # imports + distributed init + env build, for benchmarks

    # -- the jitted pieces -------------------------------------------------------------------------------------

    def _step_packed(self, state: State, action: jax.Array):
        state = jax.vmap(self.core.step)(state, action)
        packed = jnp.concatenate(
            [state.obs, state.reward[:, None], state.terminated[:, None], state.truncated[:, None],
             state.overflow[:, None]], axis=1
        ).astype(jnp.float32)
        done = state.terminated | state.truncated
        ended = done.sum()
        # Isaac Lab's Episode_Reward/<term>: mean episode sum of the envs that ended, per second of episode.
        # NaN when no env ended at this step; the loggers average with nanmean.
        per_term = state.ended_terms.sum(0) / jnp.where(ended > 0, ended, jnp.nan) / self.cfg.episode_length_s
        # Episode_Termination/<term>: how many envs each term ended at this step; Metrics/<term>: the mean over the
        # envs; Curriculum/<term>: the mean value over the envs
        counts = state.step_log[:, :self._num_terminations].sum(0)
        metrics = state.step_log[:, self._num_terminations:].mean(0)
        curriculum = [state.persistent["curriculum"][n].mean()[None] for n in self.core.curriculum.names]
        log = jnp.concatenate([per_term, counts, metrics, *curriculum])
        return state, packed, log

    def _step_unpacked(self, state: State, action: jax.Array):
        # The JAX view gets separate arrays made inside the jit: slicing them out of `packed` afterwards would cost
        # one eager dispatch per slice. obs is a copy, so it outlives the donated state.
        state, packed, log = self._step_packed(state, action)
        n = self.core.observations.size
        return state, packed[:, :self.num_obs], packed[:, n], packed[:, n + 1] > 0.5, packed[:, n + 2] > 0.5, log

    def _record_compile(self, t0: float, out: jax.Array) -> None:
        jax.block_until_ready(out)
        self.compile_s = time.perf_counter() - t0

    # -- the stateful API --------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Reset every env; returns the observation groups as torch tensors."""
        self._reset_state(seed)
        return self.observations, {}

    def _reset_state(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = seed
        keys = jax.random.split(jax.random.PRNGKey(self.seed), self.num_envs)
        spread = jnp.arange(self.num_envs, dtype=jnp.float32) / self.num_envs  # each env's place: terrain columns
        self.state = self._reset_fn(*jax.device_put((keys, spread), self._jax_device))

    def state_checksum(self) -> str:
        """A hash of the batched env state (positions, velocities, observations, RNG keys): ranks seeded apart hold
        different states, so summary.json can show that each rank collects its own experience."""
        return state_checksum([np.asarray(x) for x in jax.tree.leaves(self.state)])

    def step_jax(self, action: jax.Array):
        """The native JAX view: (obs, reward, terminated, truncated, extras) as JAX arrays on the env's device."""
        if action.shape != (self.num_envs, self.num_actions) or action.dtype != jnp.float32:
            action = jnp.asarray(action, jnp.float32).reshape(self.num_envs, self.num_actions)
        t0 = time.perf_counter() if self.compile_s is None else 0.0
        self.state, obs, reward, terminated, truncated, log = self._step_jax_fn(self.state, action)
        if self.compile_s is None:
            self._record_compile(t0, obs)
        self._check_finite(
            lambda: (bool(jnp.isfinite(action).all()), bool(jnp.isfinite(obs).all() & jnp.isfinite(reward).all()),
                     int(self.state.overflow.max()))
        )
        for hook in self.step_hooks:
            hook()
        return obs, reward, terminated, truncated, {"time_outs": truncated, "log": LazyLog(self.log_names, log)}

    def step(self, action: torch.Tensor):
        """The torch view: (obs groups, reward, terminated, truncated, extras), all torch tensors sharing memory
        with the env's JAX buffers (DLPack, no copy)."""
        import torch

        if action.shape != (self.num_envs, self.num_actions):
            action = action.reshape(self.num_envs, self.num_actions)
        t0 = time.perf_counter() if self.compile_s is None else 0.0
        self.state, packed, log = self._step_fn(self.state, to_jax(action.to(torch.float32)))
        if self.compile_s is None:
            self._record_compile(t0, packed)
        packed_t, log_t = to_torch(packed), to_torch(log)
        n = self.core.observations.size
        self._check_finite(lambda: [*torch.stack([torch.isfinite(action).all(),
                                                  torch.isfinite(packed_t).all()]).tolist(),
                                    int(packed_t[:, n + 3].max())])
        obs = self._obs_groups(packed_t)
        reward = packed_t[:, n]
        terminated = packed_t[:, n + 1].bool()
        truncated = packed_t[:, n + 2].bool()
        extras = {"time_outs": truncated, "log": LazyLog(self.log_names, log_t)}
        for hook in self.step_hooks:
            hook()
        return obs, reward, terminated, truncated, extras

    NAN_CHECK_EVERY = 16  # on a GPU, every 16th step is checked (each check waits for the device)

    def _check_finite(self, finite) -> None:
        """NaN/inf actions (a diverged policy) silently turn the physics into NaN, and an unstable model can blow
        up on its own: fail with a clear error. `finite()` gives (actions finite, obs and rewards finite, MuJoCo
        Warp's buffer-overflow bits, sticky since the start: a step that overflowed is wrong, not just slow). A
        diverged run stays diverged, so on a GPU checking every NAN_CHECK_EVERY-th step finds it without a device
        sync on every step; on CPU every step is checked. (It stands in for rsl_rl's per-step check_nan, which
        our runner turns off: that one costs three host syncs per step.)"""
        self._steps += 1
        if self.device != "cpu" and self._steps % self.NAN_CHECK_EVERY:
            return
        actions_ok, outputs_ok, overflow = finite()
        if overflow:
            raise warp_overflow_error(f"by step {self._steps}", int(overflow))
        if not actions_ok:
            raise FleetlabError(
                f"non-finite (NaN or inf) actions reached the env at step {self._steps}: the policy diverged; "
                "lower the learning rate or check the observations"
            )
        if not outputs_ok:
            raise FleetlabError(
                f"the env returned non-finite (NaN or inf) observations or rewards at step {self._steps}: the physics "
                "went unstable; lower sim_dt or the action scale"
            )

    def _obs_groups(self, flat) -> dict:
        """The observation groups (Isaac Lab's obs dict) as slices of the flat obs: a vector per group, or a dict of
        its terms for a group that does not concatenate them."""
        return {group: flat[:, plan] if isinstance(plan, slice)
                else {term: flat[:, span] for term, span in plan.items()}
                for group, plan in self._obs_plan.items()}

    @property
    def observations(self) -> dict[str, torch.Tensor]:
        # A copy: the state's buffers are donated to the next step, so a view would dangle.
        return self._obs_groups(to_torch(self.state.obs).clone())

    @property
    def episode_length_buf(self) -> torch.Tensor:
        # A copy: the state's buffers are donated to the next step, so a view would dangle.
        return to_torch(self.state.episode_length).clone()

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        lengths = np.asarray(value.detach().cpu(), dtype=np.int32).reshape(self.num_envs)
        self.state = self.state.replace(episode_length=jax.device_put(lengths, self._jax_device))

    def close(self) -> None:
        self.state = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"VecEnv({self.core.task_id}, num_envs={self.num_envs}, device={self.device})"


__all__ = ["VecEnv", "to_jax", "to_torch"]
