"""Brax PPO (brax 0.14.x, `brax.training.agents.ppo.train`): the whole training loop fused into XLA programs on the
device, across processes through jax.distributed. This module declares the library (flags, config, paths) without
importing Brax.

    env.py      our functional core as a Brax Env, and the wrapper that reports episode statistics
    params.py   networks from the config, fresh params, the checkpoint format (no torch)
    patches.py  the scoped fix for Brax on JAX >= 0.10
    export.py   the policy rebuilt in torch: TorchScript and ONNX
    session.py  what rl/workflow.py drives
"""

from __future__ import annotations

import contextlib
import os

from fleetlab.errors import FleetlabError
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.checkpoint_reader import read_checkpoint
from fleetlab.rl.library import Resume
from fleetlab.rl.run_dir import resolve_checkpoint


class Brax:
    name = "brax"
    checkpoint_subdir = ""
    variants = {"brax": []}
    checkpoint_pattern = r"model_\d+\.(pickle|pt)"  # .pt: the torch files of before 2026-12-06 (rl/brax/params.py)
    loggers = ("tensorboard", "wandb")
    logs_to_wandb = False  # rl/tracking.py mirrors its TensorBoard scalars to wandb

    def add_args(self, parser) -> None:
        parser.add_argument("--experiment_name", type=str, default=None)
        parser.add_argument("--run_name", type=str, default=None)
        parser.add_argument("--resume", action="store_true", default=False)
        parser.add_argument("--load_run", type=str, default=None, help="run-folder regex (default: the latest)")

    def framework(self, args) -> str:
        return "jax"

    def label(self, args) -> str:
        return self.name

    def configure(self, cfg: dict, args, play: bool) -> None:
        if args.experiment_name:
            cfg["experiment_name"] = args.experiment_name
        if args.run_name:
            cfg["run_name"] = args.run_name
        if not play and args.max_iterations is not None:
            cfg["max_iterations"] = args.max_iterations

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["experiment_name"], run.agent_cfg["run_name"]

    def finalize(self, run, ctx, env, run_dir) -> None:
        run.agent_cfg["seed"] = run.seed  # the BASE seed: Brax folds in the process index itself

    def find_checkpoint(self, run) -> str:
        return resolve_checkpoint(self.name, run.agent_cfg["experiment_name"], run.args.load_run, run.args.checkpoint,
                                  default=self.checkpoint_pattern)

    def auto_resume(self, run, ctx, run_dir: str) -> Resume | None:
        path = ft.auto_resume_checkpoint(ctx, run_dir, self.checkpoint_pattern)
        return None if path is None else Resume(path, read_checkpoint(path, self.name), auto=True)

    def run_dir_of(self, checkpoint: str) -> str:
        return os.path.dirname(checkpoint)

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        try:
            import brax.training.agents.ppo.train  # noqa: F401
        except ImportError as err:
            raise FleetlabError(f"--library brax needs Brax ({err}): pip install -e '.[brax]'") from None
        from fleetlab.rl.brax.session import BraxSession

        yield BraxSession(run, ctx, env, run_dir, resume)


LIBRARY = Brax()
