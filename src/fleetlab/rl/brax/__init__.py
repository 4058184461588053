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

from fleetlab import checks as c
from fleetlab.rl.library import CheckpointLayout, SeedPolicy, apply_run_name_flags


class Brax:
    name = "brax"
    # .pt: the torch files of before 2026-12-06 (rl/brax/params.py)
    checkpoint = CheckpointLayout(folder="", file=r"model_(\d+)\.(pickle|pt)",
                                  keys=frozenset({"brax_params", "env_steps"}))
    seed = SeedPolicy("seed", adds_rank=True)  # Brax folds in the process index itself
    variants = {"brax": []}
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

    def framework(self, options: dict) -> str:
        return "jax"

    def label(self, options: dict) -> str:
        return self.name

    def configure(self, run) -> None:
        apply_run_name_flags(run)

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["experiment_name"], run.agent_cfg["run_name"]

    def finalize(self, run, ctx, env, run_dir) -> None:
        pass

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.brax.session import BraxSession

        yield BraxSession(run, ctx, env, run_dir, resume)


LIBRARY = Brax()
