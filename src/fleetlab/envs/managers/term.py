"""One named term of a manager, with its params resolved against the scene, and the build-time checks every
manager applies to its terms: the call fits `func(env, **params)`, and the output has the shape and dtype that
kind of term must return. Each failure is one line naming the task and the term."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Callable

import jax
import jax.numpy as jnp

from fleetlab.envs.cfg import Entity
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError


@dataclasses.dataclass(frozen=True)
class Term:
    name: str
    func: Callable
    params: dict  # Entities resolved to Selected
    where: str  # "reward term 'alive'", for errors

    def __call__(self, env):
        return self.func(env, **self.params)


def random_time(key: jax.Array, lo_hi: tuple) -> jax.Array:
    """A timer's duration, U(lo_hi) seconds (command resampling, interval events); a fixed one (lo == hi) is the
    constant, with no random bits drawn."""
    if lo_hi[0] == lo_hi[1]:
        return jnp.asarray(lo_hi[0], jnp.float32)
    return jax.random.uniform(key, (), minval=lo_hi[0], maxval=lo_hi[1])


def require_type(scene: Scene, cfg: dict, cls, kind: str) -> None:
    """Every entry of a manager's dict is a `cls` (a RewTerm in rewards, ...)."""
    for name, term in cfg.items():
        if not isinstance(term, cls):
            raise FleetlabError(f"task '{scene.task_id}', {kind} '{name}': {term!r} is not a {cls.__name__}")


def make_term(scene: Scene, kind: str, name: str, func, params: dict) -> Term:
    where = f"{kind} term '{name}'"
    if not callable(func):
        raise FleetlabError(f"task '{scene.task_id}', {where}: func {func!r} is not a function")
    if not isinstance(params, dict):
        raise FleetlabError(f"task '{scene.task_id}', {where}: params must be a dict, got {params!r}")
    try:
        signature = inspect.signature(func)
        signature.bind(None, **params)
    except TypeError as err:
        raise FleetlabError(f"task '{scene.task_id}', {where}: {_name(func)}(env, **params) does not fit its "
                            f"params {sorted(params)}: {err}") from None
    # an Entity a term takes by default (joints=Joints()) is resolved too
    defaults = {k: p.default for k, p in signature.parameters.items() if isinstance(p.default, Entity)}
    resolved = {k: scene.select(v, where) if isinstance(v, Entity) else v for k, v in {**defaults, **params}.items()}
    return Term(name, func, resolved, where)


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def output_of(scene: Scene, term: Term, env) -> jax.ShapeDtypeStruct:
    """The shape and dtype of term(env), traced once (nothing runs)."""
    return jax.eval_shape(lambda: jnp.asarray(term(env)))


def check_output(scene: Scene, term: Term, env, rule: str) -> jax.ShapeDtypeStruct:
    """rule: "vector" (1-D float), "scalar" (float or bool, shape ()) or "bool" (bool or int, shape ())."""
    out = output_of(scene, term, env)
    problem = None
    if rule == "vector" and (out.ndim != 1 or not jnp.issubdtype(out.dtype, jnp.floating)):
        problem = "must return a 1-D float array for one env"
    elif rule == "scalar" and (out.ndim != 0 or not (jnp.issubdtype(out.dtype, jnp.floating) or out.dtype == bool)):
        problem = "must return a float scalar for one env"
    elif rule == "bool" and (out.ndim != 0 or not (out.dtype == bool or jnp.issubdtype(out.dtype, jnp.integer))):
        problem = "must return a bool scalar for one env"
    if problem:
        raise FleetlabError(f"task '{scene.task_id}', {term.where}: {_name(term.func)} {problem}, but returns "
                            f"shape {tuple(out.shape)} {out.dtype}")
    return out


__all__ = ["Term", "check_output", "make_term", "output_of", "random_time", "require_type"]
