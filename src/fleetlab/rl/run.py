"""A run resolved ONCE from the command line and passed down, typed: the library, the task and its config (the
task's default, then its `env.x=y` overrides, then the --physics_* flags), the agent config (the task's default or
the one --agent names, `agent.x=y` overrides and then the flags applied), the base seed, the device, envs per
process and every other flag. The launcher resolves the same Run its workers will."""

from __future__ import annotations

import argparse
import dataclasses

from fleetlab import checks
from fleetlab.envs import ManagerBasedRLEnvCfg, TaskEntry, import_tasks, resolve
from fleetlab.envs.registry import agent_cfg, task_cfg
from fleetlab.rl.args import physics_flags
from fleetlab.rl.library import Library, check_installed, library
from fleetlab.rl.overrides import apply_overrides, env_overrides, overrides_of

DEFAULT_SEED = 42  # Isaac Lab's agent configs' seed; each rank adds its global rank
TRAIN_ENVS, PLAY_ENVS = 4096, 32  # Isaac Lab's defaults per process


@dataclasses.dataclass
class Run:
    library: Library
    task: TaskEntry
    env_cfg: ManagerBasedRLEnvCfg  # the task config this run builds its env from (overrides and flags applied)
    agent_cfg: dict
    seed: int  # the base seed; RunContext gives each rank seed + global rank
    device: str | None  # None: cuda:LOCAL_RANK when there is a GPU, else cpu
    num_envs: int  # per process
    play: bool
    options: dict  # the library's own flags (rsl_rl: experiment_name, run_name; skrl: ml_framework, algorithm)
    distributed: bool = False
    dist_timeout: float = 600.0
    threads: int | None = None  # torch's CPU threads (None: fleetlab's choice, fleetlab/process.py)
    checkpoint: str | None = None
    resume: bool = False
    load_run: str | None = None
    video: bool = False
    video_length: int = 200
    video_interval: int = 2000
    logger: str | None = None
    log_project_name: str | None = None
    max_iterations: int | None = None  # train
    bench: bool = False  # train
    steps: int = 1000  # play
    export: bool = True  # play
    overrides: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        return self.library.framework(self.options)

    @property
    def label(self) -> str:
        return self.library.label(self.options)


# the flags that become Run fields of their own name; the rest are the library's options (or parsed elsewhere)
_FIELDS = {f.name for f in dataclasses.fields(Run)}
_NOT_OPTIONS = {"task", "agent", "headless", "num_envs", "seed", "overrides", "imports", "play"}


def load_tasks(imports: list[str]) -> None:
    """fleetlab's own tasks, then those of the --import modules (entry points load on the first unknown id)."""
    import fleetlab.tasks  # noqa: F401  (they register themselves)

    import_tasks(imports)


def resolve_run(library_name: str, args: argparse.Namespace, play: bool) -> Run:
    """The Run of parsed flags `args`: the task config built once and checked, the agent config configured and
    checked. Every mistake in them is a FleetlabError here, before any process group or env exists."""
    load_tasks(args.imports)
    lib = library(library_name)
    check_installed(lib)
    entry = resolve(args.task)
    default_cfg = task_cfg(entry)
    env_cfg = dataclasses.replace(default_cfg, **env_overrides(default_cfg, overrides_of(args.overrides, "env")))
    env_cfg = dataclasses.replace(env_cfg, physics=dataclasses.replace(env_cfg.physics, **physics_flags(args)))
    checks.check_task_cfg(env_cfg)
    flags = vars(args)
    run = Run(
        library=lib, task=entry, env_cfg=env_cfg,
        agent_cfg=apply_overrides(agent_cfg(entry, lib.name, args.agent), overrides_of(args.overrides, "agent")),
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        num_envs=args.num_envs if args.num_envs is not None else (PLAY_ENVS if play else TRAIN_ENVS), play=play,
        options={k: v for k, v in flags.items() if k not in _FIELDS | _NOT_OPTIONS and not k.startswith("physics_")},
        overrides=tuple(args.overrides), imports=tuple(args.imports),
        **{k: v for k, v in flags.items() if k in _FIELDS and k not in _NOT_OPTIONS})
    lib.configure(run)  # the flags win over the overrides, as in Isaac Lab's scripts
    checks.check_agent_cfg(run.agent_cfg, lib.checks, lib.name)
    return run
