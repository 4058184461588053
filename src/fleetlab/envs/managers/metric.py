"""Metrics: per-env values computed on the data the reward terms get; logged each step as Metrics/<name> (the
mean over the envs) and reported by `play` (the mean over env-steps)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import MetricTerm
from fleetlab.envs.managers.term import check_output, make_term, require_type
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError


class MetricManager:
    def __init__(self, cfg: dict, scene: Scene, success: str):
        self.scene = scene
        require_type(scene, cfg, MetricTerm, "metric term")
        if success and success not in cfg:
            raise FleetlabError(f"task '{scene.task_id}': success='{success}' names no metric term (metrics: "
                                f"{', '.join(cfg) or 'none'})")
        self._terms = [make_term(scene, "metric", name, t.func, t.params) for name, t in cfg.items()]
        self.names = tuple(cfg)
        self.descriptions = {name: t.description or name for name, t in cfg.items()}

    def check(self, env) -> None:
        for term in self._terms:
            check_output(self.scene, term, env, "scalar")

    def compute(self, env) -> jax.Array:
        if not self._terms:
            return jnp.zeros(0, jnp.float32)
        return jnp.stack([jnp.asarray(term(env), jnp.float32) for term in self._terms])


__all__ = ["MetricManager"]
