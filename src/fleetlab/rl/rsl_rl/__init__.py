"""rsl_rl (rsl-rl-lib 5.5.x). This module declares the library (flags, config, paths) without importing rsl_rl;
the upstream fixes live in env.py (VecEnv wrapper), logger.py (synced statistics) and runner.py (the runner)."""

from __future__ import annotations

import contextlib
import os

from fleetlab import checks as c
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import Resume, read_resume
from fleetlab.rl.run_dir import resolve_checkpoint


class RslRl:
    name = "rsl_rl"
    checkpoint_subdir = ""
    variants = {"rsl_rl": []}
    checkpoint_pattern = r"model_\d+\.pt"
    loggers = ("tensorboard", "wandb", "neptune")  # --logger choices
    logs_to_wandb = True  # rsl_rl's own writers (rank 0 only), as Isaac Lab's rsl_rl script uses them
    requires = ("rsl_rl", "rsl-rl")
    checks = {  # the agent config's ranges (fleetlab.checks), applied after the overrides and flags
        "num_steps_per_env": c.positive_int, "max_iterations": c.positive_int, "save_interval": c.positive_int,
        "algorithm.num_learning_epochs": c.positive_int, "algorithm.num_mini_batches": c.positive_int,
        "algorithm.learning_rate": c.positive, "algorithm.gamma": c.unit_interval, "algorithm.lam": c.unit_interval,
        "algorithm.clip_param": c.positive, "algorithm.entropy_coef": c.non_negative,
        "algorithm.value_loss_coef": c.non_negative, "algorithm.desired_kl": c.optional(c.positive),
        "algorithm.max_grad_norm": c.optional(c.positive), "algorithm.schedule": c.one_of("adaptive", "fixed"),
    }

    def add_args(self, parser) -> None:
        parser.add_argument("--experiment_name", type=str, default=None)
        parser.add_argument("--run_name", type=str, default=None)

    def framework(self, args) -> str:
        return "torch"

    def label(self, args) -> str:
        return self.name

    def configure(self, cfg: dict, args, play: bool) -> None:
        if args.experiment_name:
            cfg["experiment_name"] = args.experiment_name
        if args.run_name:
            cfg["run_name"] = args.run_name
        if args.logger:
            cfg["logger"] = args.logger
        if cfg.get("logger") in ("wandb", "neptune"):
            cfg[f"{cfg['logger']}_project"] = args.log_project_name or cfg["experiment_name"]
        if not play and args.max_iterations is not None:
            cfg["max_iterations"] = args.max_iterations

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["experiment_name"], run.agent_cfg["run_name"]

    def finalize(self, run, ctx, env, run_dir) -> None:
        run.agent_cfg["seed"] = ctx.seed

    def find_checkpoint(self, run) -> str:
        return resolve_checkpoint(self.name, run.agent_cfg["experiment_name"], run.args.load_run, run.args.checkpoint)

    def read_resume(self, path: str, auto: bool) -> Resume:
        return read_resume(self.name, path, auto)

    def auto_resume(self, run, ctx, run_dir: str) -> Resume | None:
        path = ft.auto_resume_checkpoint(ctx, run_dir, self.checkpoint_pattern)
        return None if path is None else read_resume(self.name, path, auto=True)

    def run_dir_of(self, checkpoint: str) -> str:
        return os.path.dirname(checkpoint)

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # rsl_rl imports GitPython, which wants a git binary
        from fleetlab.rl.rsl_rl.session import RslRlSession

        yield RslRlSession(run, ctx, env, run_dir)


LIBRARY = RslRl()
