"""rsl_rl (rsl-rl-lib 5.5.x). This module declares the library (flags, config, paths) without importing rsl_rl;
the upstream fixes live in env.py (VecEnv wrapper), logger.py (synced statistics) and runner.py (the runner)."""

from __future__ import annotations

import contextlib

from fleetlab import checks as c
from fleetlab.rl.library import CheckpointLayout, SeedPolicy, apply_run_name_flags


class RslRl:
    name = "rsl_rl"
    checkpoint = CheckpointLayout(folder="", file=r"model_(\d+)\.pt", keys=frozenset({"iter", "optimizer_state_dict"}))
    seed = SeedPolicy("seed", adds_rank=False)
    variants = {"rsl_rl": []}
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

    def framework(self, options: dict) -> str:
        return "torch"

    def label(self, options: dict) -> str:
        return self.name

    def configure(self, run) -> None:
        cfg = run.agent_cfg
        apply_run_name_flags(run)
        if run.logger:
            cfg["logger"] = run.logger
        if cfg.get("logger") in ("wandb", "neptune"):
            cfg[f"{cfg['logger']}_project"] = run.log_project_name or cfg["experiment_name"]

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["experiment_name"], run.agent_cfg["run_name"]

    def finalize(self, run, ctx, env, run_dir) -> None:
        pass

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.rsl_rl.session import RslRlSession

        yield RslRlSession(run, ctx, env, run_dir)


LIBRARY = RslRl()
