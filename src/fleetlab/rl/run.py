"""A run resolved ONCE from the command line and passed down: the library, the task entry, the agent config (the
task's default or the one --agent names, `agent.x=y` overrides and then the flags applied), the task config's
`env.x=y` overrides, the base seed, the device and envs per process."""

from __future__ import annotations

import argparse
import dataclasses

from fleetlab import checks
from fleetlab.envs import TaskEntry, import_tasks, resolve
from fleetlab.envs.registry import agent_cfg, task_cfg
from fleetlab.rl.args import apply_overrides, env_overrides, overrides_of
from fleetlab.rl.library import Library, check_installed, library

DEFAULT_SEED = 42  # Isaac Lab's agent configs' seed; each rank adds its global rank
TRAIN_ENVS, PLAY_ENVS = 4096, 32  # Isaac Lab's defaults per process


@dataclasses.dataclass
class Run:
    library: Library
    task: TaskEntry
    agent_cfg: dict
    env_overrides: dict  # `env.x=y` overrides: the task config's top-level fields they replace
    seed: int  # the base seed; RunContext gives each rank seed + global rank
    device: str | None  # None: cuda:LOCAL_RANK when there is a GPU, else cpu
    num_envs: int  # per process
    play: bool
    args: argparse.Namespace  # the other flags: checkpoint, video, physics_impl, ...

    @property
    def framework(self) -> str:
        return self.library.framework(self.args)

    @property
    def label(self) -> str:
        return self.library.label(self.args)


def load_tasks(imports: list[str]) -> None:
    """fleetlab's own tasks, then those of the --import modules (entry points load on the first unknown id)."""
    import fleetlab.tasks  # noqa: F401  (they register themselves)

    import_tasks(imports)


def resolve_run(library_name: str, args: argparse.Namespace, play: bool) -> Run:
    load_tasks(args.imports)
    lib = library(library_name)
    check_installed(lib)
    entry = resolve(args.task)
    default_cfg = task_cfg(entry)
    env_kwargs = env_overrides(default_cfg, overrides_of(args, "env"))
    checks.check_task_cfg(dataclasses.replace(default_cfg, **env_kwargs))
    cfg = apply_overrides(agent_cfg(entry, lib.name, args.agent), overrides_of(args, "agent"))
    lib.configure(cfg, args, play)  # the flags win over the overrides, as in Isaac Lab's scripts
    checks.check_agent_cfg(cfg, lib.checks, lib.name)
    num_envs = args.num_envs if args.num_envs is not None else (PLAY_ENVS if play else TRAIN_ENVS)
    return Run(library=lib, task=entry, agent_cfg=cfg, env_overrides=env_kwargs,
               seed=DEFAULT_SEED if args.seed is None else args.seed,
               device=args.device, num_envs=num_envs, play=play, args=args)
