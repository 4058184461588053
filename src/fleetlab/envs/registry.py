"""Task ids -> envs. Tasks register themselves (fleetlab's own in fleetlab/tasks/<name>/__init__.py, a user's in
their own package); this module imports no task. Isaac Lab's ids are aliases, so its commands run unchanged.

A task package is found in one of three ways: it is imported (from Python, or with `--import my_pkg.tasks` on the
command line), or it declares an entry point in the `fleetlab.tasks` group of its pyproject.toml, which is loaded
the first time an id is not found."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import os
import sys
from importlib import metadata
from typing import Callable

from fleetlab.envs.cfg import ManagerBasedRLEnvCfg
from fleetlab.envs.core import Env
from fleetlab.envs.vec_env import VecEnv
from fleetlab.errors import FleetlabError

ENTRY_POINT_GROUP = "fleetlab.tasks"


@dataclasses.dataclass(frozen=True)
class TaskEntry:
    id: str
    make_cfg: Callable[[], ManagerBasedRLEnvCfg]  # a fresh copy of the task's config
    aliases: tuple[str, ...] = ()
    description: str = ""
    # library -> a fresh agent config (its default), and `<library>_<variant>` -> another config (--agent)
    agents: dict[str, Callable[[], dict]] = dataclasses.field(default_factory=dict)
    plays: str = ""  # a play variant (Isaac Lab's -Play ids): the id of the task whose checkpoints it takes


_REGISTRY: dict[str, TaskEntry] = {}
_entry_points_loaded = False


def register(entry: TaskEntry) -> TaskEntry:
    """Add a task under its id and aliases (and as a gymnasium id). Registering the same entry again is a no-op."""
    for name in (entry.id, *entry.aliases):
        if name in _REGISTRY and _REGISTRY[name] != entry:
            raise FleetlabError(f"task id '{name}' is already registered (by {_REGISTRY[name].make_cfg.__module__}): "
                                "pick another id")
    for name in (entry.id, *entry.aliases):
        _REGISTRY[name] = entry
    _register_gymnasium(entry)
    return entry


def resolve(task_id: str) -> TaskEntry:
    """The entry for a task id or alias, or a one-line error that names the known ids."""
    if task_id not in _REGISTRY:
        load_entry_points()
    if task_id not in _REGISTRY:
        close = difflib.get_close_matches(task_id, list(_REGISTRY), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise FleetlabError(f"unknown task '{task_id}'.{hint} Known tasks: {', '.join(list_tasks())} (see `fleetlab "
                            "list`; a task of your own package: --import my_pkg.tasks)")
    return _REGISTRY[task_id]


def list_tasks() -> list[str]:
    load_entry_points()
    return sorted({e.id for e in _REGISTRY.values()})


def import_tasks(modules: list[str]) -> None:
    """Import each module (`--import my_pkg.tasks`), which registers its tasks. The working directory is searched
    last, as `python -m` would, so a package next to where you run needs no install."""
    if modules and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    for name in modules:
        if not name or name.startswith(".") or not all(part.isidentifier() for part in name.split(".")):
            raise FleetlabError(f"--import '{name}': give an absolute module name, like my_pkg.tasks (a relative "
                                "or empty name has no package to import from)")
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name is None or not name.startswith(err.name):
                raise  # the module exists but imports something missing: a bug in it, with its traceback
            raise FleetlabError(f"--import {name}: no module named '{err.name}' (install the package, or run from "
                                "the folder that holds it, or add that folder to PYTHONPATH)") from None


def load_entry_points() -> None:
    """Import every installed package's `fleetlab.tasks` entry point, once per process."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            point.load()
        except Exception as err:
            err.add_note(f"while loading the entry point '{point.name} = {point.value}' ({ENTRY_POINT_GROUP})")
            raise


def agent_cfg(entry: TaskEntry, library: str, name: str | None = None) -> dict:
    """A fresh copy of the task's agent config for `library`: its default (keyed by the library's name) or the one
    `name` picks (Isaac Lab's --agent: `rsl_rl_isaaclab`, or `rsl_rl_isaaclab_cfg_entry_point` as Isaac Lab spells
    it). A task's other configs for a library are keyed `<library>_<variant>`."""
    name = (name or library).removesuffix("_entry_point").removesuffix("_cfg")
    mine = [key for key in entry.agents if key == library or key.startswith(library + "_")]
    if name not in mine:
        if not mine:
            libraries = ", ".join(agent_libraries(entry)) or "none"
            raise FleetlabError(f"task '{entry.id}' has no {library} config (it has: {libraries})")
        raise FleetlabError(f"task '{entry.id}' has no {library} agent config '{name}' (it has: {', '.join(mine)})")
    return entry.agents[name]()


def agent_libraries(entry: TaskEntry) -> list[str]:
    """The libraries a task has a default config for: its agent keys that are not `<another key>_<variant>`."""
    return [key for key in entry.agents if not any(key.startswith(lib + "_") for lib in entry.agents if lib != key)]


def load_agent_yaml(module_file: str, name: str) -> dict:
    """A fresh copy of the YAML agent config `name` that lies next to `module_file` (a task's agents/__init__.py)."""
    import yaml

    with open(os.path.join(os.path.dirname(module_file), name)) as f:
        return yaml.safe_load(f)


def make(task_id: str, num_envs: int, device: str = "cpu", seed: int = 0, impl: str = "auto",
         **cfg_overrides) -> VecEnv:
    """Build the VecEnv for a task: `num_envs` envs on `device`, physics `impl` ("auto", "jax" or "warp")."""
    return make_from_entry(resolve(task_id), num_envs, device, seed, impl, **cfg_overrides)


def task_cfg(entry: TaskEntry, **overrides) -> ManagerBasedRLEnvCfg:
    """The task's config with its top-level fields replaced (what `env.a.b=value` overrides give)."""
    cfg = entry.make_cfg()
    if not isinstance(cfg, ManagerBasedRLEnvCfg):
        raise FleetlabError(f"task '{entry.id}': {entry.make_cfg.__module__}.{entry.make_cfg.__name__}() returns a "
                            f"{type(cfg).__name__}, not a ManagerBasedRLEnvCfg")
    return dataclasses.replace(cfg, **overrides)


def make_from_entry(entry: TaskEntry, num_envs: int, device: str = "cpu", seed: int = 0, impl: str = "auto",
                    **cfg_overrides) -> VecEnv:
    if not isinstance(num_envs, int) or num_envs <= 0:  # the Python API's check (the CLI's flags have their own)
        raise FleetlabError(f"num_envs must be a positive integer, got {num_envs!r}")
    cfg = task_cfg(entry, **cfg_overrides)
    return make_from_cfg(dataclasses.replace(cfg, physics=dataclasses.replace(cfg.physics, impl=impl)), entry.id,
                         num_envs, device, seed)


def make_from_cfg(cfg: ManagerBasedRLEnvCfg, task_id: str, num_envs: int, device: str = "cpu", seed: int = 0) -> VecEnv:
    """The VecEnv of a task config built already (a run's: its overrides and flags applied)."""
    return VecEnv(Env(cfg, task_id, device=device, num_envs=num_envs), num_envs=num_envs, seed=seed, device=device)


def _register_gymnasium(entry: TaskEntry) -> None:
    """gymnasium.make("Fleet-Cartpole-v0", num_envs=...) returns our VecEnv, as Isaac Lab's gym ids do."""
    import gymnasium

    for name in (entry.id, *entry.aliases):
        if name not in gymnasium.registry:
            gymnasium.register(
                id=name,
                entry_point=functools.partial(make, entry.id),
                disable_env_checker=True,
                order_enforce=False,
            )
