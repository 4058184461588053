"""Where a run lives: logs/<library>/<experiment>/<timestamp>[_<run name>], the checkpoint to resume or play, and
the task a run directory was trained on."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import re

from fleetlab.distributed import RunContext
from fleetlab.distributed.context import launched_run_dir
from fleetlab.errors import FleetlabError

LOG_ROOT = "logs"


def run_dir_path(library: str, experiment_name: str, stamp: str | None = None, run_name: str = "") -> str:
    """logs/<library>/<experiment>/<timestamp>[_<run_name>], as Isaac Lab names it."""
    stamp = stamp or datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    return os.path.abspath(os.path.join(LOG_ROOT, library, experiment_name, stamp + (f"_{run_name}" if run_name else "")))


def make_run_dir(ctx: RunContext, library: str, experiment_name: str, run_name: str = "") -> str:
    """The run directory: the one `fleetlab launch` chose (every restart of the group trains there), else a new
    run_dir_path. Rank 0 decides (clocks and start times differ across nodes) and broadcasts it, so every rank
    agrees; only rank 0 creates it."""
    run_dir = ctx.broadcast_object(launched_run_dir() or run_dir_path(library, experiment_name, run_name=run_name))
    if ctx.is_writer:
        os.makedirs(run_dir, exist_ok=True)
    return run_dir


def find_checkpoint(experiment_dir: str, load_run: str = ".*", checkpoint: str = r"model_.*\.pt", subdir: str = "") -> str:
    """The checkpoint to resume or play, chosen as Isaac Lab's get_checkpoint_path does: the last run (sorted by
    name, i.e. time) matching `load_run`, then its last file matching `checkpoint` in natural order."""
    if not os.path.isdir(experiment_dir):
        raise FleetlabError(f"no runs to load: '{experiment_dir}' does not exist (train first, or pass --checkpoint PATH)")
    runs = sorted(d for d in os.listdir(experiment_dir) if os.path.isdir(os.path.join(experiment_dir, d)) and re.match(load_run, d))
    if not runs:
        raise FleetlabError(f"no run in '{experiment_dir}' matches --load_run '{load_run}'")
    run_dir = os.path.join(experiment_dir, runs[-1], subdir)
    if not os.path.isdir(run_dir):
        raise FleetlabError(f"no checkpoint folder '{run_dir}' (did that run save any?)")
    natural = lambda s: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]  # noqa: E731
    ckpts = sorted((f for f in os.listdir(run_dir) if re.match(checkpoint, f)), key=natural)
    if not ckpts:
        raise FleetlabError(f"no checkpoint in '{run_dir}' matches --checkpoint '{checkpoint}'")
    return os.path.abspath(os.path.join(run_dir, ckpts[-1]))


def resolve_checkpoint(library: str, experiment_name: str, load_run: str | None, checkpoint: str | None,
                       default: str = r"model_.*\.pt", subdir: str = "") -> str:
    """A direct path wins; otherwise search the experiment's runs with the --load_run/--checkpoint patterns. A bare
    file name that is not in the current folder (`--checkpoint model_50.pt`) is such a pattern, as in Isaac Lab: it
    names a file of the latest run (or of --load_run's)."""
    if checkpoint and os.path.isfile(checkpoint):
        return os.path.abspath(checkpoint)
    if checkpoint and os.sep in checkpoint:
        raise FleetlabError(f"checkpoint '{checkpoint}' does not exist")
    experiment_dir = os.path.join(LOG_ROOT, library, experiment_name)
    return find_checkpoint(experiment_dir, load_run or ".*", checkpoint or default, subdir)


def write_json(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)


def write_params(run_dir: str, env_cfg, agent_cfg: dict, run_info: dict) -> None:
    """Isaac Lab's params/env.yaml and params/agent.yaml: both configs as this run uses them (defaults, then the
    `env.`/`agent.` overrides and the flags), env.yaml with `run_info` (task, world size, envs per rank, physics)
    added at its top."""
    import yaml

    plain = lambda data: json.loads(json.dumps(data, default=str))  # noqa: E731  (tuples -> lists, paths -> str)
    os.makedirs(os.path.join(run_dir, "params"), exist_ok=True)
    for name, data in (("env", {**run_info, **dataclasses.asdict(env_cfg)}), ("agent", agent_cfg)):
        with open(os.path.join(run_dir, "params", f"{name}.yaml"), "w") as f:
            yaml.safe_dump(plain(data), f, sort_keys=False)


def record_task(run_dir: str, task_id: str) -> None:
    write_json(os.path.join(run_dir, "params", "task.json"), {"task": task_id})


def check_checkpoint_task(path: str, task_id: str, plays: str = "") -> None:
    """Refuse a checkpoint trained on another task (its run dir records the task id), with a one-line error. A play
    variant takes the checkpoints of the task it `plays`."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(3):
        marker = os.path.join(folder, "params", "task.json")
        if os.path.isfile(marker):
            with open(marker) as f:
                trained = json.load(f)["task"]
            if trained not in (task_id, plays):
                raise FleetlabError(f"checkpoint '{path}' was trained on '{trained}', not '{task_id}'")
            return
        folder = os.path.dirname(folder)
