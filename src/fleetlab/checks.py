"""Range and kind rules for config values, declared once beside the fields they guard (a task config's
`dataclasses.field(metadata={"check": ...})`, in envs/cfg.py for the fields every task config has, and each library's
`checks` table for its agent config), and applied to the whole config after the command line's overrides: a bad
value is a one-line FleetlabError before anything is built, not a ZeroDivisionError in the middle of training.

A rule is a function of the value that returns what is wrong with it, or None. (Sizes, like a task's
observation and action sizes, are not config values at all: they follow from its terms and model.)"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Callable

from fleetlab.errors import FleetlabError

Rule = Callable[[object], "str | None"]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(value) -> float | None:
    """A number, or a string YAML 1.1 left unread ("3e-4" in the libraries' YAML files, which they cast)."""
    if _number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def positive(value) -> str | None:
    number = _float(value)
    return None if number is not None and math.isfinite(number) and number > 0 else "must be a number > 0"


def non_negative(value) -> str | None:
    number = _float(value)
    return None if number is not None and math.isfinite(number) and number >= 0 else "must be a number >= 0"


def positive_int(value) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value > 0 else "must be an integer >= 1"


def unit_interval(value) -> str | None:
    number = _float(value)
    return None if number is not None and 0 <= number <= 1 else "must be a number in [0, 1]"


def existing_file(value) -> str | None:
    return None if isinstance(value, str) and os.path.isfile(value) else "must be the path of an existing file"


def one_of(*allowed) -> Rule:
    def rule(value) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(map(repr, allowed))}"

    return rule


def optional(rule: Rule) -> Rule:
    """`rule`, or None (a setting whose default is None, typed by the rule of its other values)."""
    return lambda value: None if value is None else rule(value)


def positive_or_minus_one(value) -> str | None:
    return None if value == -1 else positive_int(value)


def check_task_cfg(cfg, where: str = "env") -> None:
    """The task config after `env.` overrides: each field's `metadata={"check": rule}`, in nested configs too
    (env.scene.sim_dt)."""
    for field in dataclasses.fields(cfg):
        value = getattr(cfg, field.name)
        rule = field.metadata.get("check")
        problem = rule(value) if rule is not None else None
        if problem:
            raise FleetlabError(f"{where}.{field.name}={value!r}: {problem}")
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check_task_cfg(value, f"{where}.{field.name}")


def check_agent_cfg(cfg: dict, checks: dict[str, Rule], library: str) -> None:
    """A library's agent config after `agent.` overrides and flags: `checks` maps dotted key paths to rules."""
    for path, rule in checks.items():
        node = cfg
        for key in path.split("."):
            if not isinstance(node, dict) or key not in node:
                break
            node = node[key]
        else:
            problem = rule(node)
            if problem:
                raise FleetlabError(f"{library} agent config: agent.{path}={node!r} {problem}")
