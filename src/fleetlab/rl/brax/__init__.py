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

from fleetlab import checks as c
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import Resume, read_resume
from fleetlab.rl.run_dir import resolve_checkpoint


class Brax:
    name = "brax"
    checkpoint_subdir = ""
    variants = {"brax": []}
    checkpoint_pattern = r"model_\d+\.(pickle|pt)"  # .pt: the torch files of before 2026-12-06 (rl/brax/params.py)
    loggers = ("tensorboard", "wandb")
    logs_to_wandb = False  # rl/tracking.py mirrors its TensorBoard scalars to wandb
    requires = ("brax", "brax")
    checks = {  # the agent config's ranges (fleetlab.checks), applied after the overrides and flags
        "max_iterations": c.positive_int, "save_interval": c.positive_int, "log_interval": c.positive_int,
        "num_steps_per_env": c.positive_int, "ppo.num_minibatches": c.positive_int,
        "ppo.num_updates_per_batch": c.positive_int, "ppo.learning_rate": c.positive,
        # None: a fixed learning rate (Brax's own default); Brax's LRSchedule names the others
        "ppo.learning_rate_schedule": c.optional(c.one_of("ADAPTIVE_KL", "NONE")),
        "ppo.desired_kl": c.positive, "ppo.entropy_cost": c.non_negative, "ppo.discounting": c.unit_interval,
        "ppo.gae_lambda": c.unit_interval, "ppo.clipping_epsilon": c.positive,
        "ppo.max_grad_norm": c.optional(c.positive), "ppo.clipping_epsilon_value": c.optional(c.positive),
        "ppo.vf_loss_coefficient": c.non_negative, "ppo.reward_scaling": c.positive,
        "network.init_noise_std": c.positive,
    }

    def add_args(self, parser) -> None:
        parser.add_argument("--experiment_name", type=str, default=None)
        parser.add_argument("--run_name", type=str, default=None)

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

    def read_resume(self, path: str, auto: bool) -> Resume:
        return read_resume(self.name, path, auto)

    def auto_resume(self, run, ctx, run_dir: str) -> Resume | None:
        path = ft.auto_resume_checkpoint(ctx, run_dir, self.checkpoint_pattern)
        return None if path is None else read_resume(self.name, path, auto=True)

    def run_dir_of(self, checkpoint: str) -> str:
        return os.path.dirname(checkpoint)

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.brax.session import BraxSession

        yield BraxSession(run, ctx, env, run_dir, resume)


LIBRARY = Brax()
