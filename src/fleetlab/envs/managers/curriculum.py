"""Curriculum (Isaac Lab's CurriculumManager), per env: each term's value starts at `initial` and is replaced by
func(env, **params) when the env's episode ends, on that episode's last data (a terrain level that rises when
the robot walked far enough). Logged as Curriculum/<name>, the mean over the envs."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import CurrTerm
from fleetlab.envs.managers.term import check_output, make_term, require_type
from fleetlab.envs.scene import Scene


class CurriculumManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        require_type(scene, cfg, CurrTerm, "curriculum term")
        self._terms = [make_term(scene, "curriculum", name, t.func, t.params) for name, t in cfg.items()]
        self._initial = {name: t.initial for name, t in cfg.items()}
        self.names = tuple(cfg)

    def initial(self) -> dict:
        return {name: jnp.asarray(value, jnp.float32) for name, value in self._initial.items()}

    def check(self, env) -> None:
        for term in self._terms:
            check_output(self.scene, term, env, "scalar")

    def update(self, env, values: dict, done: jax.Array) -> dict:
        return {t.name: jnp.where(done, jnp.asarray(t(env), jnp.float32), values[t.name]) for t in self._terms}


__all__ = ["CurriculumManager"]
