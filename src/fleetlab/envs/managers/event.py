"""Events (Isaac Lab's EventManager), in three modes:

    startup   once per env when the envs are made (a model field drawn per env: mass, friction)
    reset     at each episode start, in config order, on the default state (root pose, joint positions)
    interval  every U(interval_range_s) seconds of each env's episode (a push)

An event returns a dict of replacements: "qpos", "qvel", or a model field's entries (envs.cfg.ModelEntries). The
entries an event sets are kept per env from then on (State.persistent["model"]: their values only) and step that
env's physics; the rest of the field stays the shared model's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.envs.cfg import EVENT_MODES, EventTerm, ModelEntries
from fleetlab.envs.managers.term import make_term, random_time
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError

STATE_FIELDS = ("qpos", "qvel")



class EventManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        self.terms = {mode: [] for mode in EVENT_MODES}
        self._ranges = {}
        for name, event in cfg.items():
            where = f"task '{scene.task_id}', event term '{name}'"
            if not isinstance(event, EventTerm):
                raise FleetlabError(f"{where}: {event!r} is not an EventTerm")
            if event.mode not in EVENT_MODES:
                raise FleetlabError(f"{where}: mode '{event.mode}' is not one of {', '.join(EVENT_MODES)}")
            if event.mode == "interval" and (not event.interval_range_s or len(event.interval_range_s) != 2
                                             or not 0 < event.interval_range_s[0] <= event.interval_range_s[1]):
                raise FleetlabError(f"{where}: an interval event needs interval_range_s=(min_s, max_s), 0 < min <= max")
            self.terms[event.mode].append(make_term(scene, "event", name, event.func, event.params))
            self._ranges[name] = event.interval_range_s
        self.model_fields: dict = {}  # field -> the static index of its entries set per env, filled by check()

    @property
    def num_reset_keys(self) -> int:
        return len(self.terms["reset"])

    @property
    def num_step_keys(self) -> int:
        return len(self.terms["interval"])

    def check(self, env) -> None:
        """Every event returns a dict of known fields with their shapes; learn which model fields go per env."""
        for term in [t for mode in EVENT_MODES for t in self.terms[mode]]:
            out = jax.eval_shape(lambda t=term: t(env))
            where = f"task '{self.scene.task_id}', {term.where}"
            if not isinstance(out, dict):
                raise FleetlabError(f"{where}: an event returns a dict of replacements (qpos, qvel or model fields), "
                                    f"got {out}")
            for field, value in out.items():
                if field in STATE_FIELDS:
                    if term in self.terms["startup"]:
                        raise FleetlabError(f"{where}: a startup event cannot set {field} (use a reset event)")
                    expected = getattr(env.data, field)
                elif not (hasattr(env.model, field) and hasattr(getattr(env.model, field), "shape")):
                    raise FleetlabError(f"{where}: returns '{field}', which is neither qpos, qvel nor a field of "
                                        "MJX's Model")
                elif not isinstance(value, ModelEntries):
                    raise FleetlabError(f"{where}: returns '{field}' as {type(value).__name__}; a model field's "
                                        "change is ModelEntries(index, values)")
                else:
                    shared = getattr(env.model, field)
                    expected = jax.eval_shape(lambda s=shared, v=value: s[v.np_index])
                    if self.model_fields.setdefault(field, value.np_index) is not value.np_index and not _same_index(
                            self.model_fields[field], value.np_index):
                        raise FleetlabError(f"{where}: sets other entries of '{field}' than another event does; "
                                            "let one event set them")
                    value = value.values
                if tuple(value.shape) != tuple(expected.shape):
                    raise FleetlabError(f"{where}: '{field}' has shape {tuple(value.shape)}, the model's has "
                                        f"{tuple(expected.shape)}")

    def shared_entries(self, shared_model) -> dict:
        """The per-env entries before any event: the shared model's."""
        return {field: getattr(shared_model, field)[index] for field, index in self.model_fields.items()}

    def model_with(self, shared_model, entries: dict):
        """The shared model with this env's entries."""
        if not entries:
            return shared_model
        return shared_model.replace(**{field: getattr(shared_model, field).at[self.model_fields[field]].set(values)
                                       for field, values in entries.items()})

    def startup(self, env, key: jax.Array) -> dict:
        """The per-env model entries: the shared values, then each startup event's draws."""
        entries = self.shared_entries(env.model)
        keys = jax.random.split(key, max(1, len(self.terms["startup"])))
        for term, k in zip(self.terms["startup"], keys):
            out = term(env.replace(key=k, model=self.model_with(env.model, entries)))
            entries.update({f: v.values for f, v in out.items()})
        return entries

    def _apply(self, terms, env, keys, physics, entries: dict, qpos, qvel):
        shared = physics.model
        for term, key in zip(terms, keys):
            view = env.replace(key=key, data=physics.data(qpos, qvel), model=self.model_with(shared, entries))
            out = term(view)
            qpos, qvel = out.get("qpos", qpos), out.get("qvel", qvel)
            entries = {**entries, **{f: v.values for f, v in out.items() if f not in STATE_FIELDS}}
        return entries, qpos, qvel

    def reset(self, env, keys: list, physics, model: dict, qpos, qvel):
        """(model fields, qpos, qvel) after the reset events, in config order."""
        return self._apply(self.terms["reset"], env, keys, physics, model, qpos, qvel)

    def reset_timers(self, keys: list) -> dict:
        return {t.name: random_time(k, self._ranges[t.name]) for t, k in zip(self.terms["interval"], keys)}

    def interval(self, env, timers: dict, keys: list, physics, model: dict, qpos, qvel):
        """The interval events whose timer ran out, applied after this step; (timers, model, qpos, qvel)."""
        new_timers = {}
        for term, key in zip(self.terms["interval"], keys):
            k_event, k_time = jax.random.split(key)
            left = timers[term.name] - self.scene.dt
            due = left <= 0
            m, q, v = self._apply([term], env, [k_event], physics, model, qpos, qvel)
            keep = lambda new, old: jnp.where(due, new, old)  # noqa: E731
            model = jax.tree_util.tree_map(keep, m, model)
            qpos, qvel = keep(q, qpos), keep(v, qvel)
            new_timers[term.name] = jnp.where(due, random_time(k_time, self._ranges[term.name]), left)
        return new_timers, model, qpos, qvel


def _same_index(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))


__all__ = ["EventManager"]
