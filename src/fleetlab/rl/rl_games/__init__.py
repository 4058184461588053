"""rl_games (1.6.5). This module declares the library (flags, config, paths) without importing rl_games; the
upstream fixes live in env.py (IVecEnv wrapper) and agent.py (A2C agent, player, normalizers)."""

from __future__ import annotations

import contextlib
import os

from fleetlab import checks as c
from fleetlab.errors import FleetlabError
from fleetlab.rl.library import CheckpointLayout, SeedPolicy


class RlGames:
    name = "rl_games"
    checkpoint = CheckpointLayout(folder="nn", file=r".*\.pth", keys=frozenset({"model", "epoch", "frame"}))
    # rl_games' Runner adds the global rank (RANK) under multi_gpu, then seeds torch, NumPy and random with it (not
    # when it is 0: the workflow has seeded them with the same number already)
    seed = SeedPolicy("params.seed", adds_rank=True)
    variants = {"rl_games": []}
    loggers = ("tensorboard", "wandb")
    logs_to_wandb = False  # rl/tracking.py mirrors its TensorBoard scalars to wandb
    requires = ("rl_games", "rl-games")
    checks = {  # the agent config's ranges (fleetlab.checks), applied after the overrides and flags
        "params.config.horizon_length": c.positive_int, "params.config.minibatch_size": c.positive_int,
        "params.config.mini_epochs": c.positive_int, "params.config.max_epochs": c.positive_or_minus_one,
        "params.config.save_frequency": c.non_negative, "params.config.learning_rate": c.positive,
        "params.config.gamma": c.unit_interval, "params.config.tau": c.unit_interval,
        "params.config.e_clip": c.positive, "params.config.seq_length": c.positive_int,
        "params.config.lr_schedule": c.optional(c.one_of("adaptive", "linear", "identity")),
    }

    def add_args(self, parser) -> None:
        pass

    def framework(self, options: dict) -> str:
        return "torch"

    def label(self, options: dict) -> str:
        return self.name

    def configure(self, run) -> None:
        if not run.play and run.max_iterations is not None:
            run.agent_cfg["params"]["config"]["max_epochs"] = run.max_iterations

    def run_dir_parts(self, run) -> tuple[str, str]:
        return run.agent_cfg["params"]["config"]["name"], ""

    def finalize(self, run, ctx, env, run_dir) -> None:
        params = run.agent_cfg["params"]
        conf = params["config"]
        conf["device"] = conf["device_name"] = ctx.device
        conf["multi_gpu"] = ctx.is_distributed
        conf["num_actors"] = env.num_envs
        if "torch_compile" not in conf and not ctx.device.startswith("cuda"):
            conf["torch_compile"] = False  # upstream default True: 45 s of compiling on CPU against 7 s of training
        batch = env.num_envs * conf["horizon_length"]
        if conf["minibatch_size"] > batch:
            conf["minibatch_size"] = batch  # few envs (CPU): one minibatch of everything
        if batch % conf["minibatch_size"]:
            raise FleetlabError(f"num_envs x horizon_length = {batch} is not a multiple of minibatch_size "
                                f"{conf['minibatch_size']}")
        if run_dir is not None:
            conf["train_dir"] = os.path.dirname(run_dir)
            conf["full_experiment_name"] = os.path.basename(run_dir)

    @contextlib.contextmanager
    def session(self, run, ctx, env, run_dir, resume):
        from fleetlab.rl.rl_games.session import RlGamesSession

        yield RlGamesSession(run, ctx, env)


LIBRARY = RlGames()
