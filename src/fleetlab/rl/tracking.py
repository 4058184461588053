"""--logger wandb for the libraries that do not write to wandb themselves (rl_games, skrl; rsl_rl has its own
writers): global rank 0 starts one wandb run after the process group is up, and the library's TensorBoard writer
is wrapped so that each scalar also goes to wandb, at once (wandb's sync_tensorboard watches the event files
instead, and misses what rl_games' writer has not flushed when the run ends). The other ranks never touch wandb,
so none of them waits on its start-up or its network."""

from __future__ import annotations

import contextlib
import dataclasses
import os

from fleetlab.errors import FleetlabError


@contextlib.contextmanager
def wandb_run(run, ctx, env, run_dir: str):
    if run.logger != "wandb" or run.library.logs_to_wandb or not ctx.is_writer:
        yield None
        return
    try:
        import wandb
    except ImportError:
        raise FleetlabError("--logger wandb needs the wandb package: pip install wandb") from None
    project = run.log_project_name or os.path.basename(run.library.run_dir_parts(run)[0])  # skrl's is a path
    config = {"agent": run.agent_cfg, "env": dataclasses.asdict(env.cfg), "world_size": ctx.world_size,
              "num_envs_per_rank": env.num_envs}
    tracker = wandb.init(project=project, name=os.path.basename(run_dir), dir=run_dir, config=config)
    tracker.define_metric("*", step_metric="step")  # each scalar against its TensorBoard step
    try:
        yield tracker
    finally:
        tracker.finish()


class WandbMirror:
    """A TensorBoard writer (tensorboardX's, or skrl's keyword-only one) whose scalars also go to wandb."""

    def __init__(self, writer, tracker):
        self.writer, self.tracker = writer, tracker

    def add_scalar(self, *args, **kwargs):
        self.writer.add_scalar(*args, **kwargs)
        named = dict(zip(("tag", "value", "step"), args)) | kwargs
        step = named.get("step", named.get("global_step", named.get("timestep", 0)))
        value = named.get("value", named.get("scalar_value"))
        self.tracker.log({named["tag"]: float(value), "step": step})

    def __getattr__(self, name):
        return getattr(self.writer, name)
