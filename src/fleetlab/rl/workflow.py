"""One train and one play workflow for every library:

    run context -> task entry -> agent config (built once) -> env -> library session -> learn | evaluate -> summary

The library-specific work happens behind the `Library` / `Session` interface of rl/library.py."""

from __future__ import annotations

import dataclasses
import os
import time

from fleetlab.distributed import RunContext
from fleetlab.distributed.context import launched_run_dir
from fleetlab.envs.registry import make_from_cfg
from fleetlab.errors import FleetlabError
from fleetlab.process import ProcessSetup, freeze_and_restart_collector
from fleetlab.rl import console, evaluation, perf, tracking
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl import run_dir as run_dirs
from fleetlab.rl.library import Resume
from fleetlab.rl.run import Run
from fleetlab.rl.summary import finish
from fleetlab.rl.video import TrainingVideos


def start(run: Run) -> tuple[RunContext, object]:
    """The RunContext (process group started) and the VecEnv of this rank. Play gets the long evaluation episode."""
    ctx = RunContext.from_env(distributed=run.distributed, device=run.device, seed=run.seed,
                              ml_framework=run.framework, timeout_s=run.dist_timeout).init_process_group()
    if run.framework == "torch":  # a JAX workflow draws every random number from JAX keys, and skips torch's import
        import random

        import numpy as np
        import torch

        random.seed(ctx.seed)  # this rank's seed (base + global rank), for whatever the library draws from them
        np.random.seed(ctx.seed)
        torch.manual_seed(ctx.seed)
    cfg = run.env_cfg
    if run.play:
        # Each env runs ONE continuous episode over all `steps`, so "% of steps balanced" measures the policy, not
        # the transients after periodic resets.
        cfg = dataclasses.replace(cfg, episode_length_s=max(
            cfg.episode_length_s, (run.steps + 1) * cfg.scene.sim_dt * cfg.scene.decimation))
    env = make_from_cfg(cfg, run.task.id, run.num_envs, ctx.device, ctx.seed)
    return ctx, env


def _finalize(run: Run, ctx: RunContext, env, run_dir: str | None) -> None:
    """The agent config's last facts, known once the run has started: the seed its library declares, then the
    library's own (device, env count, run directory)."""
    run.library.seed.apply(run.agent_cfg, run.seed, ctx.seed)
    run.library.finalize(run, ctx, env, run_dir)


def train(run: Run, process: ProcessSetup) -> dict:
    lib = run.library
    ctx, env = start(run)
    # The checkpoint named by --resume / --load_run / --checkpoint is found BEFORE this run's folder exists:
    # otherwise "the latest run" would be the new, empty folder (Isaac Lab's scripts resolve it first too).
    explicit = explicit_resume(run, ctx)
    run_dir = run_dirs.make_run_dir(ctx, lib.name, *lib.run_dir_parts(run))
    learning = []  # set once training begins: from then on the folder holds the run's logs, kept whatever happens
    try:
        return _train_in(run, process, ctx, env, run_dir, explicit, learning)
    except FleetlabError:
        if ctx.is_writer and not learning:  # nothing writes a checkpoint before training begins
            run_dirs.remove_unused_run_dir(run_dir)  # a failed start leaves no folder behind
        raise


def explicit_resume(run: Run, ctx: RunContext) -> Resume | None:
    """The checkpoint of --resume / --checkpoint (Isaac Lab's resume: max_iterations MORE iterations), as rank 0
    finds it, readable on every rank; read now, so a bad file fails before the library starts."""
    if not (run.checkpoint or run.resume):
        return None
    found: str | FleetlabError | None = None
    if ctx.is_writer:
        try:
            found = run_dirs.checkpoint_of(run)
            run_dirs.check_checkpoint_task(found, run.task.id, run.task.plays)
        except FleetlabError as err:
            found = FleetlabError(str(err))
    found = ctx.broadcast_object(found)  # the error too: every rank reports it, none waits for rank 0
    if isinstance(found, FleetlabError):
        raise found
    path = ft.share_checkpoint(ctx, found if ctx.is_writer else None)
    return run_dirs.read_resume(run.library, path, auto=False)


def _train_in(run: Run, process: ProcessSetup, ctx: RunContext, env, run_dir: str, explicit: Resume | None,
              learning: list) -> dict:
    lib = run.library
    _finalize(run, ctx, env, run_dir)
    if ctx.is_writer:
        print(f"[fleetlab] {run.task.id} with {run.label}: {env.num_envs} envs per process x {ctx.world_size} "
              f"process(es) = {env.num_envs * ctx.world_size} envs; physics {env.core.physics.impl}; logs in {run_dir}",
              flush=True)
        run_dirs.write_json(os.path.join(run_dir, "params", "agent.json"), run.agent_cfg)
        run_dirs.write_params(run_dir, env.cfg, run.agent_cfg, {
            "task": run.task.id, "world_size": ctx.world_size, "num_envs_per_rank": env.num_envs,
            "num_envs_total": env.num_envs * ctx.world_size, "physics_impl": env.core.physics.impl,
            "seed": run.seed, "overrides": list(run.overrides)})
        run_dirs.record_task(run_dir, run.task.id)
    print(f"[fleetlab] {ctx.summary()}", flush=True)

    # A restart of `fleetlab launch` continues from its own folder's latest checkpoint (to the same final
    # iteration); only a first attempt starts from the --resume / --checkpoint one.
    resume = (run_dirs.auto_resume(run, ctx, run_dir) if launched_run_dir() else None) or explicit
    initial_env = env.state_checksum()  # before any step: each rank's envs start from their own seed
    with tracking.wandb_run(run, ctx, env, run_dir) as tracker, lib.session(run, ctx, env, run_dir, resume) as session:
        if tracker is not None:
            session.mirror_scalars(lambda writer: tracking.WandbMirror(writer, tracker))
        if run.video and ctx.is_writer:
            env.step_hooks.append(TrainingVideos(run, session, run_dir, ctx.device, ctx.seed))
        resumed = None
        if resume is not None:
            session.restore(resume)
            resumed = check_restored(resume, session)
        # The collector was off for the start-up (fleetlab/process.py); a library that traces first (brax) turns it
        # off again until its program runs.
        freeze_and_restart_collector()
        start_s = time.time()
        learning.append(True)
        with process.stop_signals() as stop:
            session.learn(stop)
        wall = time.time() - start_s
        policy = session.policy()
        last, figures = session.results()
        record = perf.perf_record(env, figures.pop("train_fps"), policy, measure_rollouts=run.bench)
        summary = finish(ctx, run_dir, run.label, run.task.id, env, session.checksum(), last, wall,
                         {**record, **figures}, state_checksum=session.state_checksum(), initial_env=initial_env,
                         resumed=resumed)
    return summary


def check_restored(resume: Resume, session) -> dict:
    """The state restore() brought back, hashed, beside the hash the checkpoint recorded when it was written (the
    same state, if restore restored all of it). A mismatch is reported, and kept in summary.json."""
    restored, saved = session.state_checksum(), resume.saved_state_checksum
    if saved is not None and restored != saved:
        print(f"[fleetlab] WARNING: the state restored from {resume.path} ({restored}) is not the state it saved "
              f"({saved}): the run does not continue exactly from that checkpoint", flush=True)
    return {"path": resume.path, "auto": resume.auto, "saved_state_checksum": saved,
            "restored_state_checksum": restored}


def play(run: Run) -> dict:
    lib = run.library
    ctx, env = start(run)
    _finalize(run, ctx, env, None)
    path = run_dirs.checkpoint_of(run)
    run_dirs.check_checkpoint_task(path, run.task.id, run.task.plays)
    print(f"[fleetlab] loading {path}", flush=True)
    resume = run_dirs.read_resume(lib, path, auto=False)
    run_dir = run_dirs.run_dir_of(lib, path)
    # The default (no --checkpoint) plays the run's latest checkpoint: play.json. Any other checkpoint gets its own
    # file, so playing an older one never overwrites what the latest one gave.
    out = os.path.join(run_dir, "play.json" if not run.checkpoint else
                       f"play_{os.path.splitext(os.path.basename(path))[0]}.json")
    run_dirs.check_writable(run_dir, "cannot write play's results (play.json, exported/, videos/) into the run folder")
    with lib.session(run, ctx, env, None, resume) as session:
        session.restore(resume)
        freeze_and_restart_collector()  # off for the start-up (fleetlab/process.py)
        policy = session.policy()
        result = {"task": run.task.id, "checkpoint": path, "physics_impl": env.core.physics.impl,
                  **evaluation.evaluate(env, policy, run.steps)}
        if run.export and (exported := session.export(os.path.join(run_dir, "exported"))):
            result["exported"] = exported
        if run.video:
            result["video"] = evaluation.record_video(env, policy, os.path.join(run_dir, "videos", "play.mp4"),
                                                      run.video_length)
    console.print_play_result(result)
    run_dirs.write_json(out, result)
    return result
