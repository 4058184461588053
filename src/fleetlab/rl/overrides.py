"""Isaac Lab's Hydra-style overrides: `agent.<path>=<value>` of a library's agent config (a dict) and
`env.<path>=<value>` of a task config (a dataclass), each value read as YAML and checked against the type of the
default it replaces, so that a typo is a one-line error, not a crash deep inside a library."""

from __future__ import annotations

import dataclasses

from fleetlab.errors import FleetlabError


def overrides_of(overrides: list[str], prefix: str) -> list[str]:
    """The `agent.` or `env.` overrides, in command-line order."""
    return [item for item in overrides if item.startswith(prefix + ".")]


def apply_overrides(cfg: dict, overrides: list[str]) -> dict:
    """Set `agent.a.b=value` in the nested dict `cfg`. The value is parsed as YAML and must fit the type of the
    default it replaces (an unknown key or a wrong type is a FleetlabError, not a crash deep inside the library)."""
    for item in overrides:
        path, text = item[len("agent."):].split("=", 1)
        cfg = _set(item, cfg, path.split("."), text, "the agent config")
    return cfg


def env_overrides(cfg, overrides: list[str]) -> dict:
    """`env.a.b=value` overrides of a task's config dataclass `cfg`, checked against it the same way, as
    replacements of its top-level fields: `env.rewards.alive.weight=2.0` gives {"rewards": <the default dict whose
    alive term has weight 2.0>}."""
    kwargs = {}
    for item in overrides:
        path, text = item[len("env."):].split("=", 1)
        top, *rest = path.split(".")
        fields = [f.name for f in dataclasses.fields(cfg)]
        if top in ("num_observations", "num_actions"):
            raise FleetlabError(f"override '{item}': the observation and action sizes follow from the task's terms "
                                "and its MJCF; change those instead")
        if top not in fields:
            raise FleetlabError(f"override '{item}': {type(cfg).__name__} has no field '{top}' "
                                f"(fields: {', '.join(fields)})")
        kwargs[top] = _set(item, kwargs.get(top, getattr(cfg, top)), rest, text, f"{type(cfg).__name__}.{top}")
    return kwargs


def _set(item: str, node, keys: list[str], text: str, where: str):
    """`node` with the value at `keys` replaced by `text` typed like the value it replaces (dicts and dataclasses
    are copied, never changed in place)."""
    if not keys:
        return typed_value(item, node, text)
    key = keys[0]
    if dataclasses.is_dataclass(node):
        names = [f.name for f in dataclasses.fields(node)]
        if key not in names:
            raise FleetlabError(f"override '{item}': no field '{key}' in {where} (known: {', '.join(names)})")
        return dataclasses.replace(node, **{key: _set(item, getattr(node, key), keys[1:], text, f"{where}.{key}")})
    if not isinstance(node, dict):
        raise FleetlabError(f"override '{item}': {where} is a value, not a section")
    if key not in node:
        raise FleetlabError(f"override '{item}': no key '{key}' in {where} (known: {', '.join(map(str, node))})")
    return {**node, key: _set(item, node[key], keys[1:], text, f"{where}.{key}")}


def typed_value(item: str, default, text: str):
    """`text` (YAML) as a value of the same type as `default`: an int stays an int, a float accepts an int, a string
    takes the text as written (skrl's "auto" also takes an int); a default of None accepts anything."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise FleetlabError(f"override '{item}': '{text}' is not a valid value") from None
    if default is None:
        return value
    if default == "auto" and isinstance(value, int) and not isinstance(value, bool):
        return value  # skrl's numeric fields (write_interval, checkpoint_interval) default to the string "auto"
    if isinstance(default, str):
        return text if not isinstance(value, (dict, list)) else _wrong_type(item, default, text)
    if isinstance(default, bool):
        return value if isinstance(value, bool) else _wrong_type(item, default, text)
    if isinstance(default, int):
        return value if isinstance(value, int) and not isinstance(value, bool) else _wrong_type(item, default, text)
    if isinstance(default, float):
        if isinstance(value, str):  # YAML 1.1 reads 1e-3 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                return _wrong_type(item, default, text)
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return float(value) if is_number else _wrong_type(item, default, text)
    if isinstance(default, (list, tuple)):
        return type(default)(value) if isinstance(value, list) else _wrong_type(item, default, text)
    if isinstance(default, dict):
        return value if isinstance(value, dict) else _wrong_type(item, default, text)
    return value


def _wrong_type(item: str, default, text: str):
    raise FleetlabError(f"override '{item}': expected {type(default).__name__} like the default {default!r}, "
                        f"got '{text}'")
