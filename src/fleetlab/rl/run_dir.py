"""Where a run lives: logs/<library>/<experiment>/<timestamp>[_<run name>], the checkpoint to resume or play, and
the task a run directory was trained on."""

from __future__ import annotations

import dataclasses
import datetime
import errno
import json
import os
import re
import shutil

from fleetlab.distributed import RunContext
from fleetlab.distributed.context import launched_run_dir
from fleetlab.errors import FleetlabError
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.checkpoint_reader import check_writer, read_checkpoint
from fleetlab.rl.library import Resume

LOG_ROOT = "logs"


def now_stamp() -> str:
    """Isaac Lab's run-folder time stamp (one second resolution: two runs can share one, see create_run_dir)."""
    return datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def run_dir_path(library: str, experiment_name: str, stamp: str | None = None, run_name: str = "") -> str:
    """logs/<library>/<experiment>/<timestamp>[_<run_name>], as Isaac Lab names it."""
    stamp = stamp or now_stamp()
    name = stamp + (f"_{run_name}" if run_name else "")
    return os.path.abspath(os.path.join(LOG_ROOT, library, experiment_name, name))


def create_run_dir(path: str, exclusive: bool = True) -> str:
    """Create the run folder `path` and return it. Exclusive: a folder that exists already (another run started
    in the same second) is never shared; this run gets `<path>_2`, `<path>_3`, ... instead (mkdir is atomic, so
    two processes racing for one name get two folders). A log root that is a file or not writable is a one-line
    error here, before any training."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not exclusive:
            os.makedirs(path, exist_ok=True)
            return path
        for n in range(1, 10_000):
            candidate = path if n == 1 else f"{path}_{n}"
            try:
                os.mkdir(candidate)
                return candidate
            except FileExistsError:
                continue
    except OSError as err:
        raise file_system_error(err, "cannot create the run folder") from None
    raise FleetlabError(f"cannot create a run folder next to '{path}': 10000 runs share its name")


def file_system_error(err: OSError, what: str) -> FleetlabError:
    """A file-system failure the user can fix (a file where a folder should be, no permission, a full disk) as a
    one-line FleetlabError saying what to do. Other OSErrors are not turned into this: they keep their traceback."""
    where = f"'{err.filename}'" if err.filename else "the log folder"
    hint = {errno.ENOTDIR: "a file stands where a folder is needed: move it away, or run from another folder",
            errno.EEXIST: "a file stands where a folder is needed: move it away, or run from another folder",
            errno.EACCES: "no permission to write there: run from a folder you can write to",
            errno.EPERM: "no permission to write there: run from a folder you can write to",
            errno.EROFS: "the file system is read-only: run from a folder you can write to",
            errno.ENOSPC: "the disk is full: free some space (old runs under logs/) and run again",
            errno.EDQUOT: "the disk quota is exceeded: free some space (old runs under logs/) and run again",
            errno.EFBIG: "the file is larger than this process may write (ulimit -f): raise the limit"}.get(err.errno)
    if hint is None:
        raise err
    return FleetlabError(f"{what}: {where}: {os.strerror(err.errno)} ({hint})")


def make_run_dir(ctx: RunContext, library: str, experiment_name: str, run_name: str = "") -> str:
    """The run directory: the one `fleetlab launch` chose (every restart of the group trains there; the launcher
    created it), else a new folder of run_dir_path, created exclusively. Rank 0 decides (clocks and start times
    differ across nodes) and broadcasts it, or the error it met, so every rank agrees and none waits for a rank
    that failed."""
    chosen: str | FleetlabError | None = None
    if ctx.is_writer:
        try:
            launched = launched_run_dir()
            chosen = create_run_dir(launched, exclusive=False) if launched else \
                create_run_dir(run_dir_path(library, experiment_name, run_name=run_name))
        except FleetlabError as err:
            chosen = FleetlabError(str(err))
    chosen = ctx.broadcast_object(chosen)
    if isinstance(chosen, FleetlabError):
        raise chosen
    return chosen


def check_writable(folder: str, what: str) -> None:
    """A one-line error now, rather than an OS traceback after the work, when nothing can be written in `folder`
    (a file created and removed: permissions alone say nothing for root, nor for a read-only mount)."""
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, f".fleetlab-write-check-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as err:
        raise file_system_error(err, what) from None


def remove_unused_run_dir(run_dir: str) -> None:
    """A run that failed before training leaves no folder behind (a params/-only folder would hide the real
    latest run from --resume and play). Only a folder this process created, never one of `fleetlab launch`."""
    if not launched_run_dir() and os.path.isdir(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)


def find_checkpoint(experiment_dir: str, load_run: str = ".*", checkpoint: str = r"model_.*\.pt",
                    subdir: str = "") -> str:
    """The checkpoint to resume or play, chosen as Isaac Lab's get_checkpoint_path does: the last run (sorted by
    name, i.e. time) matching `load_run`, then its last file matching `checkpoint` in natural order. Runs that
    hold no matching file at all (a launch that failed before its first checkpoint, which keeps its rank logs) are
    passed over, so they never hide the latest run that has one."""
    if not os.path.isdir(experiment_dir):
        raise FleetlabError(f"no runs to load: '{experiment_dir}' does not exist "
                            "(train first, or pass --checkpoint PATH)")
    own = os.path.abspath(launched_run_dir() or "")  # under `fleetlab launch`, the new run's own (empty) folder
    runs = sorted(d for d in os.listdir(experiment_dir) if os.path.isdir(os.path.join(experiment_dir, d))
                  and re.match(load_run, d) and os.path.abspath(os.path.join(experiment_dir, d)) != own)
    if not runs:
        raise FleetlabError(f"no run in '{experiment_dir}' matches --load_run '{load_run}'")
    natural = lambda s: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]  # noqa: E731
    for run in reversed(runs):
        run_dir = os.path.join(experiment_dir, run, subdir)
        ckpts = sorted((f for f in os.listdir(run_dir) if re.match(checkpoint, f)), key=natural) \
            if os.path.isdir(run_dir) else []
        if ckpts:
            return os.path.abspath(os.path.join(run_dir, ckpts[-1]))
    latest = os.path.join(experiment_dir, runs[-1], subdir)
    raise FleetlabError(f"no checkpoint matches --checkpoint '{checkpoint}' in '{latest}' nor in any earlier run "
                        f"of '{experiment_dir}' (did those runs save any?)")


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


def _plain(value) -> str:
    """A term's function as Isaac Lab writes it in env.yaml (module:name); anything else as its str."""
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{value.__module__}:{value.__qualname__}"
    return str(value)


def write_params(run_dir: str, env_cfg, agent_cfg: dict, run_info: dict) -> None:
    """Isaac Lab's params/env.yaml and params/agent.yaml: both configs as this run uses them (defaults, then the
    `env.`/`agent.` overrides and the flags), env.yaml with `run_info` (task, world size, envs per rank, physics)
    added at its top."""
    import yaml

    plain = lambda data: json.loads(json.dumps(data, default=_plain))  # noqa: E731  (tuples -> lists, paths -> str)
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


# -- a library's checkpoints, from its CheckpointLayout (rl/library.py) ----------------------------------------------


def checkpoint_of(run) -> str:
    """The checkpoint a run plays or resumes from: --checkpoint (a path, or a file-name regex searched in the
    latest run or --load_run's), else the latest run's latest checkpoint; play prefers the layout's play_file."""
    layout, lib = run.library.checkpoint, run.library
    experiment = os.path.basename(lib.run_dir_parts(run)[0])  # skrl's is a path
    runs = run.load_run or layout.runs.format(framework=run.framework)
    if run.play and layout.play_file and not run.checkpoint:
        try:
            return resolve_checkpoint(lib.name, experiment, runs, None, default=layout.play_file, subdir=layout.folder)
        except FleetlabError:
            pass  # no best agent (e.g. every evaluation was skipped): the latest checkpoint
    return resolve_checkpoint(lib.name, experiment, runs, run.checkpoint, default=layout.file, subdir=layout.folder)


def run_dir_of(library, checkpoint: str) -> str:
    """The run directory a checkpoint file belongs to (play writes play.json, videos and exports there)."""
    folder = os.path.dirname(os.path.abspath(checkpoint))
    return os.path.dirname(folder) if library.checkpoint.folder else folder


def read_resume(library, path: str, auto: bool = False, side: str | None = None) -> Resume:
    """The checkpoint at `path` as a Resume: read once, without running code from it (rl/checkpoint_reader.py),
    checked to be this library's, with its completing side file (the layout's completed_by; `side`: where this
    rank reads it, if not beside the checkpoint) as Resume.state."""
    checkpoint = read_checkpoint(path)
    check_writer(path, checkpoint, library.name)
    resume = Resume(path, checkpoint, auto=auto)
    side = side or _side_file(library.checkpoint, path)
    if side is not None and os.path.isfile(side):
        resume.state = read_checkpoint(side)
    return resume


def _side_file(layout, path: str) -> str | None:
    step = re.fullmatch(layout.file, os.path.basename(path))
    if layout.completed_by is None or step is None or not step.groups():
        return None
    return os.path.join(os.path.dirname(path), layout.completed_by.format(step=step.group(1)))


def auto_resume(run, ctx: RunContext, run_dir: str) -> Resume | None:
    """Under `fleetlab launch` (a restart, or a rerun into the same run dir): the run directory's latest COMPLETE
    checkpoint, as rank 0 sees it, readable on every rank (with its side file); None when there is none yet."""
    layout = run.library.checkpoint
    folder = os.path.join(run_dir, layout.folder)
    path = None
    if ctx.is_writer:
        if layout.completed_by is None:
            path = ft.latest_checkpoint(folder, layout.file)
        else:  # the checkpoint of the latest side file: a checkpoint without one is not complete
            side_pattern = re.escape(layout.completed_by).replace(re.escape("{step}"), r"(\d+)")
            side = ft.latest_checkpoint(folder, side_pattern)
            if side is not None:
                step = re.fullmatch(side_pattern, os.path.basename(side)).group(1)
                path = next((os.path.join(folder, f) for f in sorted(os.listdir(folder))
                             if (m := re.fullmatch(layout.file, f)) and m.groups() and m.group(1) == step), None)
    path = ft.share_checkpoint(ctx, path)  # a collective: rank 0's file, readable on every rank
    if path is None:
        return None
    side = _side_file(layout, path)
    return read_resume(run.library, path, auto=True, side=ft.share_checkpoint(ctx, side) if side else None)
