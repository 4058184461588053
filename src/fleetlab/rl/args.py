"""Isaac Lab's train/play flags, shared by every library's scripts and by `fleetlab train|play`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from fleetlab.errors import ArgumentParser, FleetlabError, positive_float, positive_int, seed_value


def add_args(parser: argparse.ArgumentParser, library: str, play: bool = False) -> argparse.ArgumentParser:
    from fleetlab.rl.library import library as get_library

    p = parser
    p.add_argument("--task", type=str, default="Isaac-Cartpole-v0", help="task id (see `fleetlab list`)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: it registers the tasks of your own package (repeatable)")
    p.add_argument("--num_envs", type=positive_int, default=None, help="envs PER PROCESS (N processes collect N x this)")
    p.add_argument("--seed", type=seed_value, default=None, help="base seed (0..2^32-1); each rank adds its global rank")
    p.add_argument("--device", type=str, default=None, help="cpu | cuda | cuda:K (default: cuda:LOCAL_RANK if present)")
    p.add_argument("--distributed", action="store_true", default=False, help="train with several processes")
    p.add_argument("--headless", action="store_true", default=False, help="accepted for Isaac Lab compatibility")
    p.add_argument("--video", action="store_true", default=False,
                   help="train: record an mp4 every --video_interval env steps (rank 0, videos/train/); "
                        "play: record an mp4 of the trained policy")
    p.add_argument("--video_length", type=positive_int, default=200, help="steps in each video")
    if not play:
        p.add_argument("--video_interval", type=positive_int, default=2000,
                       help="env steps between training videos (Isaac Lab's default 2000)")
    p.add_argument("--physics_impl", type=str, default="auto", choices=["auto", "jax", "warp"],
                   help="MJX implementation (auto: MuJoCo Warp on a GPU when warp-lang is installed, else JAX)")
    p.add_argument("--dist_timeout", type=positive_float, default=600.0, help="collective timeout in seconds")
    p.add_argument("--checkpoint", type=str, default=None,
                   help="checkpoint path, or a file name (a regex, as in Isaac Lab) searched in the latest run")
    p.add_argument("--resume", action="store_true", default=False,
                   help="train: continue from the latest run's latest checkpoint (with --load_run: that run's) for "
                        "--max_iterations MORE iterations")
    p.add_argument("--load_run", type=str, default=None, help="run-folder regex (default: the latest)")
    p.add_argument("--agent", type=str, default=None,
                   help=f"which of the task's {library} configs (default: {library}; `fleetlab list` shows the others; "
                        f"Isaac Lab's {library}_<name>_cfg_entry_point spelling works too)")
    lib = get_library(library)
    p.add_argument("--logger", type=str, default=None, choices=list(lib.loggers),
                   help="where training logs go (default tensorboard; wandb: global rank 0 only, TensorBoard files "
                        "are still written)")
    p.add_argument("--log_project_name", type=str, default=None,
                   help="the wandb/neptune project (default: the experiment name)")
    lib.add_args(p)
    if play:
        p.add_argument("--steps", type=positive_int, default=1000, help="steps to evaluate the policy for")
        p.add_argument("--export", action=argparse.BooleanOptionalAction, default=True,
                       help="export TorchScript and ONNX (--no-export: skip)")
    else:
        p.add_argument("--max_iterations", type=positive_int, default=None, help="training iterations (>= 1)")
        p.add_argument("--bench", action="store_true", default=False,
                       help="after training, also measure env-only and policy-inference FPS (for `fleetlab bench`)")
    return p


def parse(library: str, play: bool = False, argv: list[str] | None = None) -> argparse.Namespace:
    """Isaac Lab's flags, plus Hydra-style `agent.<path>=<value>` overrides of the agent config, as Isaac Lab's
    scripts accept (e.g. `agent.params.config.schedule_type=standard`)."""
    what = "Play" if play else "Train"
    script = os.path.basename(sys.argv[0])  # an Isaac Lab script path, or fleetlab's own entry point
    prog = script if script.endswith(".py") and script != "__main__.py" else f"fleetlab {what.lower()} --library {library}"
    parser = ArgumentParser(prog=prog, description=f"{what} a fleetlab task with {library}.")
    add_args(parser, library, play)
    parser.add_argument("overrides", nargs="*",
                        help="agent.<key.path>=<yaml value> and env.<field.path>=<yaml value> overrides of the agent "
                             "and task configs (Isaac Lab's Hydra overrides)")
    args = parser.parse_intermixed_args(argv)  # overrides may sit between flags, as Hydra's do in Isaac Lab
    for item in args.overrides:
        if not item.startswith(("agent.", "env.")) or "=" not in item:
            parser.error(f"override '{item}' must look like agent.<key.path>=<value> or env.<field.path>=<value>")
    return args


def overrides_of(args: argparse.Namespace, prefix: str) -> list[str]:
    """The `agent.` or `env.` overrides, in command-line order."""
    return [item for item in args.overrides if item.startswith(prefix + ".")]


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
            raise FleetlabError(f"override '{item}': {type(cfg).__name__} has no field '{top}' (fields: {', '.join(fields)})")
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
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _wrong_type(item, default, text)
    if isinstance(default, (list, tuple)):
        return type(default)(value) if isinstance(value, list) else _wrong_type(item, default, text)
    if isinstance(default, dict):
        return value if isinstance(value, dict) else _wrong_type(item, default, text)
    return value


def _wrong_type(item: str, default, text: str):
    raise FleetlabError(f"override '{item}': expected {type(default).__name__} like the default {default!r}, got '{text}'")
