"""One train and one play workflow for every library:

    run context -> task entry -> agent config (built once) -> env -> library session -> learn | evaluate -> summary

The library-specific work happens behind the `Library` / `Session` interface of rl/library.py."""

from __future__ import annotations

import os
import time

from fleetlab.distributed import RunContext
from fleetlab.distributed.context import launched_run_dir
from fleetlab.envs.registry import make_from_entry
from fleetlab.rl import console, evaluation, garbage_collection, perf, tracking
from fleetlab.rl import run_dir as run_dirs
from fleetlab.rl.checkpoint_reader import read_checkpoint
from fleetlab.rl.library import Resume
from fleetlab.rl.run import Run
from fleetlab.rl.summary import finish
from fleetlab.rl.video import TrainingVideos


def start(run: Run) -> tuple[RunContext, object]:
    """The RunContext (process group started) and the VecEnv of this rank. Play gets the long evaluation episode."""
    args = run.args
    ctx = RunContext.from_env(distributed=args.distributed, device=run.device, seed=run.seed,
                              ml_framework=run.framework, timeout_s=args.dist_timeout).init_process_group()
    if run.framework == "torch":  # a JAX workflow draws every random number from JAX keys, and skips torch's import
        import torch

        torch.manual_seed(ctx.seed)
    overrides = dict(run.env_overrides)
    if run.play:
        # Each env runs ONE continuous episode over all `steps`, so "% of steps balanced" measures the policy, not
        # the transients after periodic resets.
        cfg = run.task.make_task(**run.env_overrides).cfg
        overrides["episode_length_s"] = max(cfg.episode_length_s, (args.steps + 1) * cfg.sim_dt * cfg.decimation)
    env = make_from_entry(run.task, run.num_envs, ctx.device, ctx.seed, args.physics_impl, **overrides)
    return ctx, env


def train(run: Run) -> dict:
    lib, args = run.library, run.args
    ctx, env = start(run)
    run_dir = run_dirs.make_run_dir(ctx, lib.name, *lib.run_dir_parts(run))
    lib.finalize(run, ctx, env, run_dir)
    if ctx.is_writer:
        print(f"[fleetlab] {run.task.id} with {run.label}: {env.num_envs} envs per process x {ctx.world_size} "
              f"process(es) = {env.num_envs * ctx.world_size} envs; physics {env.core.physics.impl}; logs in {run_dir}",
              flush=True)
        run_dirs.write_json(os.path.join(run_dir, "params", "agent.json"), run.agent_cfg)
        run_dirs.write_params(run_dir, env.cfg, run.agent_cfg, {
            "task": run.task.id, "world_size": ctx.world_size, "num_envs_per_rank": env.num_envs,
            "num_envs_total": env.num_envs * ctx.world_size, "physics_impl": env.core.physics.impl,
            "seed": run.seed, "overrides": list(args.overrides)})
        run_dirs.record_task(run_dir, run.task.id)
    print(f"[fleetlab] {ctx.summary()}", flush=True)

    resume = None
    if args.checkpoint or getattr(args, "resume", False):  # Isaac Lab's resume: max_iterations MORE iterations
        path = lib.find_checkpoint(run)
        run_dirs.check_checkpoint_task(path, run.task.id, run.task.plays)
        resume = Resume(path, read_checkpoint(path, lib.name))  # a bad file fails before the library starts
    elif launched_run_dir():  # a restart of `fleetlab launch`: continue to the same final iteration
        resume = lib.auto_resume(run, ctx, run_dir)

    with tracking.wandb_run(run, ctx, env, run_dir) as tracker, lib.session(run, ctx, env, run_dir, resume) as session:
        if tracker is not None:
            session.mirror_scalars(lambda writer: tracking.WandbMirror(writer, tracker))
        if args.video and ctx.is_writer:
            env.step_hooks.append(TrainingVideos(run, session, run_dir, ctx.device, ctx.seed))
        if resume is not None:
            session.restore(resume)
        # The collector was paused for the start-up (cli.run_workflow); a library that traces first (brax) pauses
        # it again until its program runs.
        garbage_collection.freeze_and_restart()
        start_s = time.time()
        session.learn()
        wall = time.time() - start_s
        policy = session.policy()
        last, figures = session.results()
        record = perf.perf_record(env, figures.pop("train_fps"), policy, measure_rollouts=args.bench)
        summary = finish(ctx, run_dir, run.label, run.task.id, env, session.checksum(), last, wall,
                         {**record, **figures})
    return summary


def play(run: Run) -> dict:
    lib, args = run.library, run.args
    ctx, env = start(run)
    lib.finalize(run, ctx, env, None)
    path = lib.find_checkpoint(run)
    run_dirs.check_checkpoint_task(path, run.task.id, run.task.plays)
    print(f"[fleetlab] loading {path}", flush=True)
    resume = Resume(path, read_checkpoint(path, lib.name))
    run_dir = lib.run_dir_of(path)
    with lib.session(run, ctx, env, None, resume) as session:
        session.restore(resume)
        garbage_collection.freeze_and_restart()  # paused for the start-up (cli.run_workflow)
        policy = session.policy()
        result = {"task": run.task.id, "checkpoint": path, "physics_impl": env.core.physics.impl,
                  **evaluation.evaluate(env, policy, args.steps)}
        if args.export and (exported := session.export(os.path.join(run_dir, "exported"))):
            result["exported"] = exported
        if args.video:
            result["video"] = evaluation.record_video(env, policy, os.path.join(run_dir, "videos", "play.mp4"),
                                                      args.video_length)
    console.print_play_result(result)
    run_dirs.write_json(os.path.join(run_dir, "play.json"), result)
    return result
