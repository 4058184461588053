"""Commands (Isaac Lab's CommandManager): each command term's state is drawn at a reset and again whenever its
timer, U(resampling_time_range) seconds, runs out; its `update` runs every step after that. Terms read the
vector as env.command(name)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import CommandTerm
from fleetlab.envs.managers.term import random_time, require_type
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError


class CommandManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        require_type(scene, cfg, CommandTerm, "command")
        self._terms = dict(cfg)

    @property
    def num_keys(self) -> int:
        return len(self._terms)

    def check(self, env) -> None:
        """Each term's state must hold a 1-D float "command"."""
        for name, term in self._terms.items():
            out = jax.eval_shape(lambda t=term: t.sample(env))
            command = out.get("command") if isinstance(out, dict) else None
            if command is None or command.ndim != 1:
                raise FleetlabError(f"task '{self.scene.task_id}', command '{name}': sample(env) must return a dict "
                                    f"with a 1-D float 'command', got {out}")

    def reset(self, env, keys: list) -> dict:
        state = {}
        for (name, term), key in zip(self._terms.items(), keys):
            k_sample, k_time = jax.random.split(key)
            state[name] = {**term.sample(env.replace(key=k_sample)),
                           "time_left": random_time(k_time, term.resampling_time_range)}
            state[name] = term.update(env.replace(commands={**env.commands, **state}), state[name])
        return state

    def step(self, env, keys: list) -> dict:
        """The commands for the next step: timers count down by the policy dt; where one ran out, a new draw."""
        state = {}
        for (name, term), key in zip(self._terms.items(), keys):
            old = env.commands[name]
            k_sample, k_time = jax.random.split(key)
            time_left = old["time_left"] - self.scene.dt
            fresh = {**term.sample(env.replace(key=k_sample)),
                     "time_left": random_time(k_time, term.resampling_time_range)}
            due = time_left <= 0
            new = jax.tree_util.tree_map(lambda f, o: jnp.where(due, f, o), fresh, {**old, "time_left": time_left})
            state[name] = term.update(env, new)
        return state


__all__ = ["CommandManager"]
