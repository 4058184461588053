"""skrl (2.1.x): PyTorch under torchrun, JAX under jax.distributed (skrl's launcher or ours). This module declares
the library (flags, config, paths) without importing skrl, which starts distributed training when IMPORTED (torch:
init_process_group("nccl") + cuda.set_device; JAX: jax.distributed.initialize). patches.py imports it only after
RunContext has set up the process group / JAX runtime, with those calls made no-ops.

    env.py            what the torch and JAX env wrappers share
    agent.py          the PPO hooks: resumed timesteps, atomic checkpoints with RNG states, graceful stop
    torch_backend.py  skrl-torch: env wrapper, synced normalizer, PPO, runner
    jax_backend.py    skrl-JAX: the same, plus one pmap per reduction instead of one per call
    patches.py        the scoped import of skrl and the scoped JAX fixes
    session.py        what rl/workflow.py drives
"""

from __future__ import annotations

import contextlib
import os

from fleetlab import checks as c
from fleetlab.rl.library import CheckpointLayout, SeedPolicy


class Skrl:
    name = "skrl"
    # Every agent_<t> is followed by fleetlab's fleetlab_<t>.pt (timestep and RNG states), which completes it. A
    # run folder is <time>_ppo_<framework>, or <time>_ppo_<framework>_<n> for a second run started in the same
    # second: a torch run never resumes or plays a JAX checkpoint. Play prefers skrl's best agent.
    checkpoint = CheckpointLayout(folder="checkpoints", file=r"agent_(\d+)\.(pt|pickle)", keys=frozenset({"policy"}),
                                  runs=r".*_ppo_{framework}(_\d+)?$", play_file=r"best_agent\.(pt|pickle)",
                                  completed_by="fleetlab_{step}.pt")
    seed = SeedPolicy("seed", adds_rank=True)  # skrl's set_seed adds the global rank itself
    variants = {"skrl": [], "skrl-jax": ["--ml_framework", "jax"]}
    loggers = ("tensorboard", "wandb")
    logs_to_wandb = False  # rl/tracking.py mirrors its TensorBoard scalars to wandb
    requires = ("skrl", "skrl")
    checks = {  # the agent config's ranges (fleetlab.checks), applied after the overrides and flags
        "agent.rollouts": c.positive_int, "agent.learning_epochs": c.positive_int, "agent.mini_batches": c.positive_int,
        "agent.learning_rate": c.positive, "agent.discount_factor": c.unit_interval,
        "agent.gae_lambda": c.unit_interval,
        "agent.ratio_clip": c.positive, "trainer.timesteps": c.positive_int,
        "agent.experiment.checkpoint_interval": c.non_negative, "agent.experiment.write_interval": c.non_negative,
    }

    def add_args(self, parser) -> None:
        parser.add_argument("--ml_framework", type=str, default="torch", choices=["torch", "jax"])
        parser.add_argument("--algorithm", type=str, default="PPO", choices=["PPO"])

    def framework(self, options: dict) -> str:
        return options.get("ml_framework", "torch")  # argparse allows torch and jax only

    def label(self, options: dict) -> str:
        return f"{self.name}-{self.framework(options)}"

    def configure(self, run) -> None:
        cfg, play = run.agent_cfg, run.play
        if not play and run.max_iterations is not None:
            cfg["trainer"]["timesteps"] = run.max_iterations * cfg["agent"]["rollouts"]
        experiment = cfg["agent"]["experiment"]
        for key in ("write_interval", "checkpoint_interval"):
            if experiment.get(key) == "auto":  # skrl's rule, fixed here on the FULL run (a resumed run is shorter)
                experiment[key] = int(cfg["trainer"]["timesteps"] / 10)
        if play:
            experiment["write_interval"] = experiment["checkpoint_interval"] = 0
        cfg["trainer"]["close_environment_at_exit"] = False

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["agent"]["experiment"]["directory"], f"ppo_{run.framework}"

    def finalize(self, run, ctx, env, run_dir) -> None:
        cfg = run.agent_cfg
        cfg["trainer"]["disable_progressbar"] = not ctx.is_writer
        if run_dir is not None:
            experiment = cfg["agent"]["experiment"]
            experiment["directory"], experiment["experiment_name"] = os.path.split(run_dir)

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.skrl import patches
        from fleetlab.rl.skrl.session import SkrlSession

        backend = patches.import_backend(ctx, run.framework)
        with patches.installed(run.framework):
            yield SkrlSession(backend, run, ctx, env, resume)


LIBRARY = Skrl()
