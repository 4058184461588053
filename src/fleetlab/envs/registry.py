"""Task ids -> envs. Isaac Lab's ids are aliases, so commands written for Isaac Lab run unchanged."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import time
from typing import Callable

from fleetlab.envs.core import Env, Task
from fleetlab.envs.vec_env import VecEnv
from fleetlab.errors import FleetlabError
from fleetlab.sim import load_physics


@dataclasses.dataclass(frozen=True)
class TaskEntry:
    id: str
    make_task: Callable[..., Task]
    aliases: tuple[str, ...] = ()
    description: str = ""
    agents: dict[str, str] = dataclasses.field(default_factory=dict)  # library -> "module:function" giving its cfg


_REGISTRY: dict[str, TaskEntry] = {}


def register(entry: TaskEntry) -> None:
    for name in (entry.id, *entry.aliases):
        if name in _REGISTRY:
            raise ValueError(f"task id '{name}' is already registered")
        _REGISTRY[name] = entry
    _register_gymnasium(entry)


def resolve(task_id: str) -> TaskEntry:
    """The entry for a task id or alias, or a one-line error that names the known ids."""
    if task_id not in _REGISTRY:
        close = difflib.get_close_matches(task_id, list(_REGISTRY), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise FleetlabError(f"unknown task '{task_id}'.{hint} Known tasks: {', '.join(list_tasks())} (see `fleetlab list`)")
    return _REGISTRY[task_id]


def list_tasks() -> list[str]:
    return sorted({e.id for e in _REGISTRY.values()})


def aliases_of(task_id: str) -> tuple[str, ...]:
    return resolve(task_id).aliases


def agent_cfg(task_id: str, library: str):
    """The library's default agent config for a task (a fresh copy)."""
    entry = resolve(task_id)
    if library not in entry.agents:
        raise FleetlabError(f"task '{task_id}' has no {library} config (it has: {', '.join(entry.agents) or 'none'})")
    module, func = entry.agents[library].split(":")
    return getattr(importlib.import_module(module), func)()


def make(task_id: str, num_envs: int, device: str = "cpu", seed: int = 0, impl: str = "jax", **cfg_overrides) -> VecEnv:
    """Build the VecEnv for a task: `num_envs` envs on `device`, physics `impl` ("jax" or "warp")."""
    if not isinstance(num_envs, int) or num_envs <= 0:
        raise FleetlabError(f"num_envs must be a positive integer, got {num_envs!r}")
    task = resolve(task_id).make_task(**cfg_overrides)
    cfg = task.cfg
    physics = load_physics(cfg.xml_path, sim_dt=cfg.sim_dt, decimation=cfg.decimation, device=device, impl=impl)
    env = VecEnv(Env(task, physics), num_envs=num_envs, seed=seed, device=device)
    env.startup_s = _seconds_since_process_start()  # imports + distributed init + env build, for benchmarks
    return env


def _seconds_since_process_start() -> float | None:
    try:
        import psutil
    except ImportError:
        return None
    return time.time() - psutil.Process().create_time()


def _register_gymnasium(entry: TaskEntry) -> None:
    """gymnasium.make("Fleet-Cartpole-v0", num_envs=...) returns our VecEnv, as Isaac Lab's gym ids do."""
    try:
        import gymnasium
    except ImportError:  # gymnasium is optional for the core
        return
    for name in (entry.id, *entry.aliases):
        if name not in gymnasium.registry:
            gymnasium.register(
                id=name,
                entry_point=functools.partial(make, entry.id),
                disable_env_checker=True,
                order_enforce=False,
            )


def _register_builtin() -> None:
    from fleetlab.tasks.cartpole.env import make_task as cartpole

    agents = "fleetlab.tasks.cartpole.agents"
    cartpole_agents = {
        "rsl_rl": f"{agents}.rsl_rl_ppo_cfg:cfg",
        "rl_games": f"{agents}.rl_games_ppo_cfg:cfg",
        "skrl": f"{agents}.skrl_ppo_cfg:cfg",
    }

    register(
        TaskEntry(
            "Fleet-Cartpole-v0",
            cartpole,
            aliases=("Isaac-Cartpole-v0",),
            description="Cartpole, Isaac Lab manager-based terms (obs cart,pole; rewards x dt)",
            agents=cartpole_agents,
        )
    )
    register(
        TaskEntry(
            "Fleet-Cartpole-Direct-v0",
            functools.partial(cartpole, direct=True),
            aliases=("Isaac-Cartpole-Direct-v0",),
            description="Cartpole, Isaac Lab Direct terms (obs pole,cart; |pole| > pi/2 ends)",
            agents=cartpole_agents,
        )
    )
    for name, title, what in (
        ("ant", "Ant", "Ant, Isaac Lab classic terms (60 obs, 8 efforts x 7.5 Nm; walk to +x; ends below 0.31 m)"),
        ("humanoid", "Humanoid", "Humanoid, Isaac Lab classic terms (87 obs, 21 efforts; walk to +x; ends below 0.8 m)"),
    ):
        agents = f"fleetlab.tasks.{name}.agents"
        register(
            TaskEntry(
                f"Fleet-{title}-v0",
                importlib.import_module(f"fleetlab.tasks.{name}.cfg").make_task,
                aliases=(f"Isaac-{title}-v0",),
                description=what,
                agents={"rsl_rl": f"{agents}:rsl_rl", "rl_games": f"{agents}:rl_games", "skrl": f"{agents}:skrl"},
            )
        )


_register_builtin()
