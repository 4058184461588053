"""An rl_games training or playing session on a fleetlab VecEnv (what rl/workflow.py drives)."""

from __future__ import annotations

import numpy as np
import torch
from rl_games.torch_runner import Runner

from fleetlab.distributed import parameter_checksum
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import Resume
from fleetlab.rl.rl_games.agent import (
    FleetA2CAgent,
    FleetPlayer,
    PinnedDeviceConfig,
    training_state_checksum,
    without_compile_prefix,
)
from fleetlab.rl.rl_games.env import RlGamesVecEnv
from fleetlab.rl.rl_games.observer import EpisodeLogObserver


class RlGamesSession:
    def __init__(self, run, ctx, env):
        self.ctx, self.env = ctx, env
        params = run.agent_cfg["params"]
        self.clip_obs = params["env"].get("clip_observations", np.inf)
        wrapped = RlGamesVecEnv(env, self.clip_obs, params["env"].get("clip_actions", np.inf))
        runner = Runner(algo_observer=EpisodeLogObserver(ctx))
        runner.algo_factory.register_builder("a2c_continuous", lambda **kw: FleetA2CAgent(ctx=ctx, env=env, **kw))
        runner.player_factory.register_builder("a2c_continuous", lambda **kwargs: FleetPlayer(**kwargs))
        runner.load({"params": params})  # a deep copy: the env goes in afterwards
        config = PinnedDeviceConfig(runner.params["config"])
        # rl_games takes a ready env through config["env_info"] + config["vec_env"]; without them it builds one
        # from its process-wide registries (vecenv / env_configurations), which Isaac Lab's wrapper overwrites.
        config["vec_env"], config["env_info"] = wrapped, wrapped.get_env_info()
        runner.params["config"] = config
        self.agent = self.player = None
        if run.play:
            self.player = runner.create_player()
        else:
            self.agent = runner.algo_factory.create(runner.algo_name, base_name="run", params=runner.params)

    def restore(self, resume: Resume) -> None:
        checkpoint = without_compile_prefix(resume.checkpoint)
        if self.player is not None:
            self.player.restore_checkpoint(checkpoint)
            return
        agent = self.agent
        agent.set_full_state_weights(checkpoint)  # weights, optimizer, normalizers, epoch and frame counters
        if not resume.auto and agent.max_epochs > 0:  # explicit --resume / --checkpoint: max_iterations MORE
            agent.max_epochs += agent.epoch_num
        ft.restore_rng(self.ctx, checkpoint.get("fleetlab_rng"), self.env)
        print(f"[fleetlab] resuming from {resume.path} at epoch {agent.epoch_num + 1}/{agent.max_epochs}", flush=True)

    def learn(self, stop) -> None:
        self.agent.stop = stop
        self.agent.train()

    def policy(self):
        """Deterministic actions (the mean) from the rl_games model, with its obs normalizer, in [-1, 1]."""
        model = (self.player or self.agent).model
        model.eval()
        clip_obs = self.clip_obs

        def act(obs):
            obs = model.norm_obs(torch.clamp(obs, -clip_obs, clip_obs))
            return torch.clamp(model({"is_train": False, "prev_actions": None, "obs": obs})["mus"], -1.0, 1.0)

        return act

    def training_policy(self):
        model = self.agent.model
        was_training = model.training
        act = self.policy()  # switches the model to eval mode
        model.train(was_training)

        def act_kept(obs):
            mode = model.training  # rl_games switches modes itself between rollout and update: restore this one
            model.eval()  # in train mode the obs normalizer would update from these observations
            try:
                return act(obs)
            finally:
                model.train(mode)

        return act_kept

    def checksum(self) -> str:
        return parameter_checksum(self.agent.model)

    def state_checksum(self) -> str:
        return training_state_checksum(self.agent)

    def results(self) -> tuple[dict, dict]:
        agent = self.agent
        last = {"mean_reward": float(agent.game_rewards.get_mean()[0]) if agent.game_rewards.current_size else None}
        fps = getattr(agent, "fleet_train_fps", [])
        steady = fps[1:] or fps  # epoch 1 carries the JIT compile
        return last, {"train_fps": float(np.median(steady)) if steady else None}

    def export(self, folder: str) -> list[str]:
        return []

    def mirror_scalars(self, wrap) -> None:
        self.agent.writer = wrap(self.agent.writer)
