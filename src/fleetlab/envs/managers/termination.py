"""Terminations (Isaac Lab's TerminationManager): an episode ends where any term fires. Terms with time_out are
truncations (the value bootstraps: Isaac Lab's time_outs), the others failures; an env that fails on its last
step counts as terminated, not timed out, as in Isaac Lab. Each term's count is logged as
Episode_Termination/<name> (a time-out only where no failure fired)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import DoneTerm
from fleetlab.envs.managers.term import check_output, make_term, require_type
from fleetlab.envs.scene import Scene


class TerminationManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        require_type(scene, cfg, DoneTerm, "termination term")
        self._terms = [(make_term(scene, "termination", name, t.func, t.params), t.time_out) for name, t in cfg.items()]
        self.names = tuple(cfg)
        self.time_outs = tuple(t.time_out for t in cfg.values())

    def check(self, env) -> None:
        for term, _ in self._terms:
            check_output(self.scene, term, env, "bool")

    def compute(self, env) -> tuple[jax.Array, jax.Array, jax.Array]:
        """(terminated, truncated, each term's firing as float32, in config order)."""
        values = [(term(env).astype(bool), time_out) for term, time_out in self._terms]
        terminated = _any([v for v, t in values if not t])
        truncated = _any([v for v, t in values if t]) & ~terminated
        fired = [v & ~terminated if t else v for v, t in values]
        return terminated, truncated, jnp.stack(fired).astype(jnp.float32) if fired else jnp.zeros(0, jnp.float32)


def _any(values: list) -> jax.Array:
    out = jnp.zeros((), bool)
    for i, v in enumerate(values):
        out = v if i == 0 else out | v
    return out


__all__ = ["TerminationManager"]
