"""Rewards (Isaac Lab's RewardManager): the step's reward is the sum of weight x term (x the policy dt when the
task's reward_scale_by_dt), and each weighted term is summed per episode for Episode_Reward/<name>."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import RewTerm
from fleetlab.envs.managers.term import check_output, make_term, require_type
from fleetlab.envs.scene import Scene


class RewardManager:
    def __init__(self, cfg: dict, scene: Scene, scale_by_dt: bool):
        self.scene = scene
        require_type(scene, cfg, RewTerm, "reward term")
        self._terms = [make_term(scene, "reward", name, term.func, term.params) for name, term in cfg.items()]
        self.names = tuple(cfg)
        scale = scene.dt if scale_by_dt else 1.0
        self._weights = jnp.asarray([cfg[n].weight * scale for n in self.names], jnp.float32)

    def check(self, env) -> None:
        for term in self._terms:
            check_output(self.scene, term, env, "scalar")

    def unweighted(self, env) -> dict:
        """Each term's value, before its weight: for tests and tools."""
        return {term.name: term(env) for term in self._terms}

    def compute(self, env) -> jax.Array:
        """Each term times its weight (a vector in config order); the reward is its sum."""
        if not self._terms:
            return jnp.zeros(0, jnp.float32)
        return jnp.stack([term(env) for term in self._terms]).astype(jnp.float32) * self._weights


__all__ = ["RewardManager"]
