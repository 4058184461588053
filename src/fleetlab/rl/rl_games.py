"""rl_games (1.6.5) adapter: IVecEnv wrapper and registration, an A2C agent with its distributed gaps fixed,
train() and play()."""

from __future__ import annotations

import os
import time

import gymnasium
import numpy as np
import torch
from rl_games.algos_torch import a2c_continuous, players
from rl_games.algos_torch.running_mean_std import RunningMeanStd
from rl_games.common import env_configurations, vecenv
from rl_games.common.ivecenv import IVecEnv
from rl_games.torch_runner import Runner

from fleetlab.distributed import RunContext, parameter_checksum
from fleetlab.distributed.sync import global_batch_moments
from fleetlab.distributed.torch_pg import group_made_by_run_context
from fleetlab.envs.registry import agent_cfg, resolve
from fleetlab.errors import FleetlabError
from fleetlab.rl import common
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.args import apply_overrides
from fleetlab.rl.checkpoint_reader import read_checkpoint

LIBRARY = "rl_games"
VECENV_NAME = "fleetlab"


class RlGamesVecEnv(IVecEnv):
    """Our VecEnv as rl_games' IVecEnv: obs and actions clipped as Isaac Lab's wrapper does, all on the device."""

    def __init__(self, env, clip_obs: float = np.inf, clip_actions: float = np.inf):
        self.env = env
        self.clip_obs, self.clip_actions = clip_obs, clip_actions

    def _obs(self, groups):
        return {"obs": torch.clamp(groups["policy"], -self.clip_obs, self.clip_obs)}

    def step(self, actions):
        actions = torch.clamp(actions.detach(), -self.clip_actions, self.clip_actions)
        obs, reward, terminated, truncated, extras = self.env.step(actions)
        infos = {"time_outs": truncated, "log": extras["log"]}
        return self._obs(obs), reward, terminated | truncated, infos

    def reset(self):
        # The env was reset when built and auto-resets: a second reset here would overwrite the env RNG state that
        # a resumed run restored, and replay the seed's first episodes.
        return self._obs(self.env.observations)

    def get_number_of_agents(self):
        return 1

    @property
    def observation_space(self):  # read by rl_games' player through env_configurations.get_env_info
        return self.get_env_info()["observation_space"]

    @property
    def action_space(self):
        return self.get_env_info()["action_space"]

    def get_env_info(self):
        high = np.full(self.env.num_obs, self.clip_obs, np.float32)
        act = np.full(self.env.num_actions, self.clip_actions, np.float32)
        return {
            "observation_space": gymnasium.spaces.Box(-high, high, dtype=np.float32),
            "action_space": gymnasium.spaces.Box(-act, act, dtype=np.float32),
            "agents": 1,
            "value_size": 1,
        }


def register_env(env: RlGamesVecEnv) -> None:
    """rl_games builds its env from a registry: point "rlgpu" at our already-built env (as Isaac Lab does)."""
    vecenv.register(VECENV_NAME, lambda config_name, num_actors, **kwargs: env)
    env_configurations.register("rlgpu", {"vecenv_type": VECENV_NAME, "env_creator": lambda **kwargs: env})


class SyncedRunningMeanStd(RunningMeanStd):
    """Upstream's RunningMeanStd updates from each rank's own batch, so the obs/value normalizers drift apart
    across ranks (and so do the policies that read them). Here the batch moments are all-reduced first: every rank
    applies the same update, computed from the union of all ranks' batches."""

    def _update_mean_var_count_from_moments(self, mean, var, count, batch_mean, batch_var, batch_count: int):
        batch_mean, batch_var, batch_count = global_batch_moments(batch_mean, batch_var, batch_count)
        return super()._update_mean_var_count_from_moments(mean, var, count, batch_mean, batch_var, batch_count)


def _synced_copy(module: torch.nn.Module) -> SyncedRunningMeanStd:
    synced = SyncedRunningMeanStd(tuple(module.insize) if hasattr(module, "insize") else module.running_mean.shape)
    synced.load_state_dict(module.state_dict())
    return synced.to(module.running_mean.device)


class PinnedDeviceConfig(dict):
    """Upstream A2CBase rewrites config['device'] to 'cuda:LOCAL_RANK' under multi_gpu, even on a CPU run. This
    config keeps the device that RunContext chose."""

    def __setitem__(self, key, value):
        if key == "device" and "device" in self:
            return
        super().__setitem__(key, value)


class FleetA2CAgent(a2c_continuous.A2CAgent):
    """Upstream calls dist.init_process_group("nccl") in A2CBase.__init__ and torch.cuda.set_device in train():
    neither works on CPU, so both run inside group_made_by_run_context. Checkpoints are atomic and carry every
    rank's RNG state; SIGINT/SIGTERM stop training after a checkpoint."""

    def __init__(self, base_name, params, ctx: RunContext, env):
        device = ctx.device
        self.ctx, self.fleet_env = ctx, env
        self.stop, self.rng_states = ft.StopRequest(), None
        with group_made_by_run_context(device), common.printed_by_writer_only(ctx):  # upstream: summary on every rank
            super().__init__(base_name=base_name, params=params)
        model = self.model
        if self.normalize_input:
            model.running_mean_std = _synced_copy(model.running_mean_std)
        if self.normalize_value:
            model.value_mean_std = _synced_copy(model.value_mean_std)
            self.value_mean_std = model.value_mean_std
        self._fleet_device = device

    def update_lr(self, lr):
        # Upstream broadcasts rank 0's LR into the optimizer but leaves each rank's self.last_lr alone, and
        # train_actor_critic resets the optimizer to self.last_lr on every minibatch. With schedule_type
        # 'standard' (LR updated once per mini-epoch) the other ranks then train with their own stale LR and the
        # weights diverge. Keep last_lr equal to the LR actually broadcast.
        super().update_lr(lr)
        self.last_lr = self.optimizer.param_groups[0]["lr"]

    def train(self):
        with group_made_by_run_context(self._fleet_device):
            return super().train()

    def train_epoch(self):
        # Keep this rank's own training FPS per epoch (upstream prints rank 0's only), for `fleetlab bench`.
        out = super().train_epoch()
        self.fleet_train_fps = getattr(self, "fleet_train_fps", []) + [self.curr_frames / out[3]]
        # Upstream saves on rank 0 only, after this returns, at epochs only rank 0 knows (best reward): gather
        # every rank's RNG state each epoch, so any checkpoint carries the current one.
        signum = self.stop.agreed(self.ctx)
        self.rng_states = ft.gather_rng(self.ctx, self.fleet_env)
        if signum:
            path = os.path.join(self.nn_dir, f"last_{self.config['name']}_ep_{self.epoch_num}_stopped")
            if self.global_rank == 0:
                self.save(path)
            raise ft.GracefulStop(signum, path + ".pth")
        return out

    def save(self, fn):
        # Upstream torch.save()s straight to the final name: a kill mid-write leaves a truncated checkpoint.
        state = self.get_full_state_weights()
        state["fleetlab_rng"] = self.rng_states
        ft.atomic_torch_save(state, fn + ".pth")


class FleetPlayer(players.PpoPlayerContinuous):
    """Upstream's player reads the checkpoint with torch.load(weights_only=False) (torch_ext.safe_load), which can
    run code from it: this one reads it with read_rl_games_checkpoint (weights_only=True, written by rl_games)."""

    def restore(self, fn):
        checkpoint = read_rl_games_checkpoint(fn)
        self.model.load_state_dict(checkpoint["model"])
        if self.normalize_input and "running_mean_std" in checkpoint:
            self.model.running_mean_std.load_state_dict(checkpoint["running_mean_std"])


def read_rl_games_checkpoint(path: str) -> dict:
    checkpoint = read_checkpoint(path, LIBRARY)
    # A model saved after torch.compile has its keys under "_orig_mod." (upstream's load_checkpoint strips it too).
    checkpoint["model"] = {k.removeprefix("_orig_mod."): v for k, v in checkpoint["model"].items()}
    return checkpoint


def run_dir_parts(args) -> tuple[str, str, str]:
    """(library folder, experiment, run name) of a training run's directory, for make_run_dir and `fleetlab launch`."""
    return LIBRARY, apply_overrides(agent_cfg(args.task, LIBRARY), args.overrides)["params"]["config"]["name"], ""


def _build(args, ctx: RunContext, env, run_dir: str | None, play: bool) -> tuple[Runner, dict]:
    cfg = apply_overrides(agent_cfg(args.task, LIBRARY), args.overrides)
    params = cfg["params"]
    conf = params["config"]
    conf["device"] = conf["device_name"] = ctx.device
    conf["multi_gpu"] = ctx.is_distributed
    conf["num_actors"] = env.num_envs
    if "torch_compile" not in conf and not ctx.device.startswith("cuda"):
        conf["torch_compile"] = False  # upstream default True: 45 s of compiling on CPU against 7 s of training
    if not play and args.max_iterations is not None:
        conf["max_epochs"] = args.max_iterations
    batch = env.num_envs * conf["horizon_length"]
    if conf["minibatch_size"] > batch:
        conf["minibatch_size"] = batch  # few envs (CPU): one minibatch of everything
    if batch % conf["minibatch_size"]:
        raise FleetlabError(f"num_envs x horizon_length = {batch} is not a multiple of minibatch_size {conf['minibatch_size']}")
    if run_dir is not None:
        conf["train_dir"] = os.path.dirname(run_dir)
        conf["full_experiment_name"] = os.path.basename(run_dir)
    params["seed"] = ctx.seed
    wrapped = RlGamesVecEnv(env, params["env"].get("clip_observations", np.inf), params["env"].get("clip_actions", np.inf))
    register_env(wrapped)
    runner = Runner()
    runner.algo_factory.register_builder(
        "a2c_continuous", lambda **kwargs: FleetA2CAgent(ctx=ctx, env=env, **kwargs)
    )
    runner.player_factory.register_builder("a2c_continuous", lambda **kwargs: FleetPlayer(**kwargs))
    runner.load({"params": params})
    runner.params["config"] = PinnedDeviceConfig(runner.params["config"])
    # Upstream adds RANK (read from the environment) to the seed itself; ours already holds base + global rank.
    _seed_everything(ctx.seed)
    return runner, cfg


def _seed_everything(seed: int) -> None:
    import random

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(args) -> dict:
    ctx, env = common.context_and_env(args, play=False)
    task_id = resolve(args.task).id
    _, name, _ = run_dir_parts(args)
    run_dir = common.make_run_dir(ctx, LIBRARY, name)
    if ctx.is_writer:
        print(f"[fleetlab] {task_id} with rl_games: {env.num_envs} envs per process x {ctx.world_size} process(es) "
              f"= {env.num_envs * ctx.world_size} envs; logs in {run_dir}", flush=True)
        common.record_task(run_dir, task_id)
    print(f"[fleetlab] {ctx.summary()}", flush=True)
    runner, cfg = _build(args, ctx, env, run_dir, play=False)
    if ctx.is_writer:
        common.write_json(os.path.join(run_dir, "params", "agent.json"), cfg)
    agent = runner.algo_factory.create(runner.algo_name, base_name="run", params=runner.params)
    path = None
    if args.checkpoint:
        path = common.resolve_checkpoint(LIBRARY, name, None, args.checkpoint, default=r".*\.pth", subdir="nn")
        common.check_checkpoint_task(path, task_id)
    else:  # a restart of `fleetlab launch`: the latest complete checkpoint of this run (None otherwise)
        path = ft.auto_resume_checkpoint(ctx, os.path.join(run_dir, "nn"), r".*\.pth")
    if path is not None:
        checkpoint = read_rl_games_checkpoint(path)  # not agent.restore: upstream's reads with weights_only=False
        agent.set_full_state_weights(checkpoint)  # weights, optimizer, normalizers, epoch and frame counters
        ft.restore_rng(ctx, checkpoint.get("fleetlab_rng"), env)
        print(f"[fleetlab] resuming from {path} at epoch {agent.epoch_num + 1}/{agent.max_epochs}", flush=True)
    agent.stop.install()
    start = time.time()
    agent.train()
    wall = time.time() - start
    checksum = parameter_checksum(agent.model)
    last = {"mean_reward": float(agent.game_rewards.get_mean()[0]) if agent.game_rewards.current_size else None}
    fps = getattr(agent, "fleet_train_fps", [])
    steady = fps[1:] or fps  # epoch 1 carries the JIT compile
    policy = _policy(agent.model, env, cfg["params"]["env"].get("clip_observations", np.inf))
    perf = common.perf_record(env, float(np.median(steady)) if steady else None, policy, measure_rollouts=args.bench)
    summary = common.finish(ctx, run_dir, LIBRARY, task_id, env, checksum, last, wall, perf)
    if args.video and ctx.is_writer:
        path = common.record_video(env, policy, os.path.join(run_dir, "videos", "train.mp4"), args.video_length)
        print(f"[fleetlab] video: {path}", flush=True)
    return summary


def _policy(model, env, clip_obs: float = 5.0):
    """Deterministic actions (the mean) from an rl_games model, with its obs normalizer, in [-1, 1]."""
    model.eval()

    def act(obs):
        out = model({"is_train": False, "prev_actions": None, "obs": model.norm_obs(torch.clamp(obs, -clip_obs, clip_obs))})
        return torch.clamp(out["mus"], -1.0, 1.0)

    return act


def play(args) -> dict:
    ctx, env = common.context_and_env(args, play=True)
    task_id = resolve(args.task).id
    _, name, _ = run_dir_parts(args)
    path = common.resolve_checkpoint(LIBRARY, name, None, args.checkpoint, default=r".*\.pth", subdir="nn")
    common.check_checkpoint_task(path, task_id)
    print(f"[fleetlab] loading {path}", flush=True)
    runner, cfg = _build(args, ctx, env, None, play=True)
    player = runner.create_player()
    player.restore(path)
    policy = _policy(player.model, env, cfg["params"]["env"].get("clip_observations", np.inf))
    result = {"task": task_id, "checkpoint": path, **common.evaluate(env, policy, args.steps)}
    run_dir = os.path.dirname(os.path.dirname(path))  # <run>/nn/<name>.pth
    if args.video:
        result["video"] = common.record_video(env, policy, os.path.join(run_dir, "videos", "play.mp4"), args.video_length)
    common.print_play_result(result)
    common.write_json(os.path.join(run_dir, "play.json"), result)
    return result
