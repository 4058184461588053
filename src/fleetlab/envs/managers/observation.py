"""Observations (Isaac Lab's ObservationManager): groups of terms. Each term: func, then noise (in a group with
enable_corruption), clip, scale, then its history. A group is one vector of its terms in config order
(concatenate_terms) or a dict of them. All groups ride in ONE flat float32 array of the State, "policy" first;
`layout` says where each group and term lies. Sizes follow from the terms, traced once when the env is built."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import GaussianNoise, ObsGroup, ObsTerm, UniformNoise
from fleetlab.envs.managers.term import Term, check_output, make_term
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError


@dataclasses.dataclass(frozen=True)
class Slot:
    group: str
    term: str
    start: int
    stop: int


class ObservationManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        where = f"task '{scene.task_id}'"
        if "policy" not in cfg:
            raise FleetlabError(f"{where}: the config has no 'policy' observation group (observations={{'policy': "
                                "ObsGroup(...)}})")
        self.groups: dict[str, ObsGroup] = {"policy": cfg["policy"], **{g: v for g, v in cfg.items() if g != "policy"}}
        self._terms: list[tuple[str, Term, ObsTerm]] = []
        for group, obs_group in self.groups.items():
            if not isinstance(obs_group, ObsGroup):
                raise FleetlabError(f"{where}, observation group '{group}': {obs_group!r} is not an ObsGroup")
            if not obs_group.terms:
                raise FleetlabError(f"{where}, observation group '{group}' has no terms")
            for name, term in obs_group.terms.items():
                if not isinstance(term, ObsTerm):
                    raise FleetlabError(f"{where}, observation term '{group}/{name}': {term!r} is not an ObsTerm")
                if term.noise is not None and not isinstance(term.noise, (UniformNoise, GaussianNoise)):
                    raise FleetlabError(f"{where}, observation term '{group}/{name}': noise must be UniformNoise or "
                                        "GaussianNoise")
                self._terms.append((group, make_term(scene, "observation", f"{group}/{name}", term.func, term.params),
                                    term))
        self.layout: list[Slot] = []
        self._dims: dict[str, int] = {}

    def check(self, env) -> None:
        """Trace each term once: its output must be a 1-D float vector; the layout follows."""
        start = 0
        for group, term, cfg in self._terms:
            dim = check_output(self.scene, term, env, "vector").shape[0] * max(1, cfg.history_length)
            self._dims[term.name] = dim
            self.layout.append(Slot(group, term.name.split("/", 1)[1], start, start + dim))
            start += dim

    def group_slice(self, group: str) -> slice:
        slots = [s for s in self.layout if s.group == group]
        return slice(slots[0].start, slots[-1].stop)

    @property
    def size(self) -> int:
        return self.layout[-1].stop

    @property
    def noisy(self) -> list[str]:
        return [t.name for g, t, c in self._terms if c.noise is not None and self.groups[g].enable_corruption]

    @property
    def num_keys(self) -> int:
        return 1 if self.noisy else 0

    def compute(self, env, history: dict, key, reset: bool) -> tuple[jax.Array, dict]:
        """(flat obs, new history). At a reset the history is filled with the first value."""
        noisy = self.noisy
        keys = dict(zip(noisy, jax.random.split(key, len(noisy)))) if noisy else {}
        parts, new_history = [], {}
        for group, term, cfg in self._terms:
            value = term(env)
            if term.name in keys:
                value = value + _noise(cfg.noise, keys[term.name], value)
            if cfg.clip is not None:
                value = jnp.clip(value, cfg.clip[0], cfg.clip[1])
            if cfg.scale is not None:
                value = value * cfg.scale
            if cfg.history_length:
                past = jnp.broadcast_to(value, (cfg.history_length, *value.shape)) if reset else history[term.name]
                new_history[term.name] = past if reset else jnp.concatenate([past[1:], value[None]])
                value = new_history[term.name].reshape(-1)
            parts.append(value)
        return jnp.concatenate(parts), new_history


def _noise(noise, key, value) -> jax.Array:
    if isinstance(noise, UniformNoise):
        return jax.random.uniform(key, value.shape, minval=noise.n_min, maxval=noise.n_max)
    return noise.mean + noise.std * jax.random.normal(key, value.shape)


__all__ = ["ObservationManager", "Slot"]
