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
import re

from fleetlab import checks as c
from fleetlab.errors import FleetlabError
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.checkpoint_reader import read_checkpoint
from fleetlab.rl.library import Resume, read_resume
from fleetlab.rl.run_dir import resolve_checkpoint


class Skrl:
    name = "skrl"
    checkpoint_subdir = "checkpoints"
    variants = {"skrl": [], "skrl-jax": ["--ml_framework", "jax"]}
    loggers = ("tensorboard", "wandb")
    logs_to_wandb = False  # rl/tracking.py mirrors its TensorBoard scalars to wandb
    requires = ("skrl", "skrl")
    checks = {  # the agent config's ranges (fleetlab.checks), applied after the overrides and flags
        "agent.rollouts": c.positive_int, "agent.learning_epochs": c.positive_int, "agent.mini_batches": c.positive_int,
        "agent.learning_rate": c.positive, "agent.discount_factor": c.unit_interval, "agent.gae_lambda": c.unit_interval,
        "agent.ratio_clip": c.positive, "trainer.timesteps": c.positive_int,
        "agent.experiment.checkpoint_interval": c.non_negative, "agent.experiment.write_interval": c.non_negative,
    }

    def add_args(self, parser) -> None:
        parser.add_argument("--ml_framework", type=str, default="torch", choices=["torch", "jax"])
        parser.add_argument("--algorithm", type=str, default="PPO", choices=["PPO"])

    def framework(self, args) -> str:
        framework = getattr(args, "ml_framework", "torch")
        if framework not in ("torch", "jax"):
            raise FleetlabError(f"--ml_framework must be 'torch' or 'jax', got '{framework}'")
        return framework

    def label(self, args) -> str:
        return f"{self.name}-{self.framework(args)}"

    def configure(self, cfg: dict, args, play: bool) -> None:
        if not play and args.max_iterations is not None:
            cfg["trainer"]["timesteps"] = args.max_iterations * cfg["agent"]["rollouts"]
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
        cfg["seed"] = run.seed  # the BASE seed: skrl's set_seed adds the global rank itself
        cfg["trainer"]["disable_progressbar"] = not ctx.is_writer
        if run_dir is not None:
            experiment = cfg["agent"]["experiment"]
            experiment["directory"], experiment["experiment_name"] = os.path.split(run_dir)

    def find_checkpoint(self, run) -> str:
        """--checkpoint PATH, else the last run of this framework (or --load_run's): to play, its best_agent (skrl's
        pick), else its last agent_*; to resume, its last agent_*."""
        experiment = os.path.basename(run.agent_cfg["agent"]["experiment"]["directory"])
        suffix = r"\.pickle" if run.framework == "jax" else r"\.pt"
        # <time>_ppo_<framework>, or <time>_ppo_<framework>_<n> for a second run started in the same second
        runs, checkpoint = run.args.load_run or rf".*_ppo_{run.framework}(_\d+)?$", run.args.checkpoint
        if not run.play and not checkpoint:
            return resolve_checkpoint(self.name, experiment, runs, None, default=rf"agent_\d+{suffix}",
                                      subdir=self.checkpoint_subdir)
        try:
            return resolve_checkpoint(self.name, experiment, runs, checkpoint, default=rf"best_agent{suffix}",
                                      subdir=self.checkpoint_subdir)
        except FleetlabError:
            if checkpoint:
                raise
            return resolve_checkpoint(self.name, experiment, runs, None, default=rf"agent_.*{suffix}",
                                      subdir=self.checkpoint_subdir)

    def read_resume(self, path: str, auto: bool) -> Resume:
        """The agent file and, when there is one, fleetlab's side file written with it (timestep, RNG states)."""
        resume = read_resume(self.name, path, auto)
        t = re.fullmatch(r"agent_(\d+)\.\w+", os.path.basename(path))
        side = os.path.join(os.path.dirname(path), f"fleetlab_{t.group(1)}.pt") if t else None
        if side and os.path.isfile(side):
            resume.state = read_checkpoint(side)
        return resume

    def auto_resume(self, run, ctx, run_dir: str) -> Resume | None:
        """The latest agent_<t> checkpoint of this run with its fleetlab_<t>.pt (timestep and RNG states) written
        after it, i.e. the latest COMPLETE checkpoint; both as rank 0 sees them."""
        agent_path = state_path = None
        if ctx.is_writer:
            folder = os.path.join(run_dir, self.checkpoint_subdir)
            state_path = ft.latest_checkpoint(folder, r"fleetlab_\d+\.pt")
            if state_path is not None:
                t = re.search(r"(\d+)", os.path.basename(state_path)).group(1)
                agent_path = next((os.path.join(folder, f) for f in os.listdir(folder)
                                   if re.fullmatch(rf"agent_{t}\.\w+", f)), None)
                state_path = state_path if agent_path else None
        agent_path, state_path = ft.share_checkpoint(ctx, agent_path), ft.share_checkpoint(ctx, state_path)
        if agent_path is None or state_path is None:
            return None
        resume = read_resume(self.name, agent_path, auto=True)
        resume.state = read_checkpoint(state_path)
        return resume

    def run_dir_of(self, checkpoint: str) -> str:
        return os.path.dirname(os.path.dirname(checkpoint))  # <run>/checkpoints/<file>

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.skrl import patches
        from fleetlab.rl.skrl.session import SkrlSession

        backend = patches.import_backend(ctx, run.framework)
        with patches.installed(run.framework):
            yield SkrlSession(backend, run, ctx, env, resume)


LIBRARY = Skrl()
