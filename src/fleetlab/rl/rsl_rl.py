"""rsl_rl (rsl-rl-lib 5.5.x) adapter: VecEnv wrapper, a runner that also runs on CPU/gloo, synced logging,
train() and play()."""

from __future__ import annotations

import contextlib
import logging
import os
import statistics
import warnings
import time
from collections import deque

os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # rsl_rl imports GitPython, which wants a git binary

import torch
from rsl_rl.env import VecEnv as RslVecEnv
from rsl_rl.runners import OnPolicyRunner
from rsl_rl.utils.logger import Logger
from tensordict import TensorDict

from fleetlab.distributed import (
    RunContext,
    all_reduce_sum,
    nanmean_over_ranks,
    parameter_checksum,
)
from fleetlab.envs.registry import agent_cfg, resolve
from fleetlab.envs.vec_env import LazyLog
from fleetlab.rl import common
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.args import apply_overrides
from fleetlab.rl.checkpoint_reader import read_checkpoint

LIBRARY = "rsl_rl"


class RslRlVecEnvWrapper(RslVecEnv):
    """Our VecEnv as rsl_rl's VecEnv: TensorDict observations, dones = terminated | truncated."""

    def __init__(self, env):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = env.cfg

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf = value

    def get_observations(self) -> TensorDict:
        return TensorDict(self.env.observations, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        obs, reward, terminated, truncated, extras = self.env.step(actions)
        return TensorDict(obs, batch_size=[self.num_envs]), reward, terminated | truncated, extras


class SyncedLogger(Logger):
    """Upstream logs episode statistics of rank 0's envs only, and FPS as rank 0's FPS times the world size.
    This logger collects on every rank, all-reduces the episode statistics over ALL ranks and sums the FPS that
    each rank measured; rank 0 writes TensorBoard and prints one console line per iteration."""

    def __init__(self, *args, ctx: RunContext, **kwargs):
        super().__init__(*args, **kwargs)
        self.ctx = ctx
        self.rewbuffer, self.lenbuffer = deque(maxlen=100), deque(maxlen=100)
        self.progress: common.Progress | None = None
        self.last: dict = {}
        self.fps_history: list[float] = []
        self.local_fps: list[float] = []  # this rank's own training FPS per iteration (for `fleetlab bench`)
        self.split: list[tuple[float, float]] = []  # (rollout s, PPO update s) per iteration
        self.iteration_end = lambda it, total_it: None  # set by FleetOnPolicyRunner: checkpoints and stops
        self._steps: list[torch.Tensor] = []  # per env step: (ended, return so far, length so far) of every env

    def process_env_step(self, rewards, dones, extras, intrinsic_rewards=None) -> None:
        # Upstream skips this on ranks without a writer (we need every rank's episodes), and it copies the ended
        # episodes to the host at every step (nonzero + .cpu(): two device syncs per step). Here a step only
        # queues device tensors; `_drain` reads them once per iteration.
        if "log" in extras:
            self.ep_extras.append(extras["log"])
        self.cur_reward_sum += rewards
        self.cur_episode_length += 1
        ended = dones > 0
        self._steps.append(torch.stack([ended.float(), self.cur_reward_sum, self.cur_episode_length], 1))
        self.cur_reward_sum.masked_fill_(ended, 0)
        self.cur_episode_length.masked_fill_(ended, 0)

    def _drain(self) -> dict[str, list[float]]:
        """This iteration's ended episodes into the 100-episode buffers, and the env's log rows as samples."""
        if self._steps:
            steps = torch.stack(self._steps).flatten(0, 1)  # (step, env) order, as upstream extends its buffers
            ended = steps[steps[:, 0] > 0].cpu()
            self.rewbuffer.extend(ended[:, 1].tolist())
            self.lenbuffer.extend(ended[:, 2].tolist())
            self._steps.clear()
        samples = {"Train/mean_reward": list(self.rewbuffer), "Train/mean_episode_length": list(self.lenbuffer)}
        if self.ep_extras and all(isinstance(ep, LazyLog) for ep in self.ep_extras):
            rows = torch.stack([ep.values for ep in self.ep_extras]).cpu()  # one read for the whole iteration
            for i, key in enumerate(self.ep_extras[0].names):
                samples[key] = rows[:, i].tolist()
        else:  # plain dicts of scalars (other envs)
            for key in dict.fromkeys(k for ep in self.ep_extras for k in ep):
                samples[key] = [float(ep[key]) for ep in self.ep_extras if key in ep]
        self.ep_extras.clear()
        return samples

    def log(self, it, start_it, total_it, collect_time, learn_time, loss_dict, learning_rate, action_std, rnd_weight, **_):
        steps = self.cfg["num_steps_per_env"] * self.num_envs
        fps = float(all_reduce_sum(torch.tensor([steps / (collect_time + learn_time)], device=self.device)).item())
        stats = nanmean_over_ranks(self._drain(), self.device)
        self.tot_timesteps += steps * self.gpu_world_size
        self.tot_time += collect_time + learn_time
        self.fps_history.append(fps)
        self.local_fps.append(steps / (collect_time + learn_time))
        self.split.append((collect_time, learn_time))
        later = self.fps_history[1:] or self.fps_history  # the first iteration carries the JIT compile
        self.last = {"iteration": it, "fps": fps, "fps_median": statistics.median(later), **stats}
        self.iteration_end(it, total_it)
        if self.writer is None:
            return
        for key, value in loss_dict.items():
            self.writer.add_scalar(f"Loss/{key}", value, it)
        self.writer.add_scalar("Loss/learning_rate", learning_rate, it)
        self.writer.add_scalar("Policy/mean_std", action_std.mean().item(), it)
        self.writer.add_scalar("Perf/total_fps", fps, it)
        self.writer.add_scalar("Perf/collection_time", collect_time, it)
        self.writer.add_scalar("Perf/learning_time", learn_time, it)
        for key, value in stats.items():
            self.writer.add_scalar(key if "/" in key else f"Episode/{key}", value, it)
        if self.progress is None:
            self.progress = common.Progress(total_it, start_it)
        print(
            self.progress.line(
                it, fps, ret=stats.get("Train/mean_reward"), len=stats.get("Train/mean_episode_length"),
                lr=learning_rate,
            ),
            flush=True,
        )


class FleetOnPolicyRunner(OnPolicyRunner):
    """OnPolicyRunner that takes its ranks, device and process group from our RunContext, writes atomic
    checkpoints that carry every rank's RNG state, and stops gracefully on SIGINT/SIGTERM."""

    def __init__(self, env, train_cfg: dict, log_dir: str | None, ctx: RunContext):
        self.ctx = ctx
        # Upstream's check_nan runs three `.any()` host syncs per env step, which stop the CPU from queuing the
        # next step while the GPU works. Our VecEnv checks actions, observations and rewards itself, on every
        # 16th step on a GPU (VecEnv._check_finite). An explicit `check_for_nan` in the config still wins.
        train_cfg.setdefault("check_for_nan", False)
        with common.printed_by_writer_only(ctx):  # upstream prints the model summary on every rank
            super().__init__(env, train_cfg, log_dir=log_dir, device=ctx.device)
        self._use_fused_optimizer()
        self.logger = SyncedLogger(
            log_dir=log_dir, cfg=self.cfg, env_cfg=env.cfg, num_envs=env.num_envs, is_distributed=self.is_distributed,
            gpu_world_size=self.gpu_world_size, gpu_global_rank=self.gpu_global_rank, device=self.device, ctx=ctx,
        )
        self.logger.iteration_end = self._iteration_end
        self.stop = ft.StopRequest()
        self.rng_states: list[dict] | None = None
        self.task_id: str | None = None

    def _use_fused_optimizer(self) -> None:
        # Upstream builds torch.optim.Adam with its defaults (the multi-tensor "foreach" kernels). The PPO update
        # of a small MLP is launch-bound, so on CUDA the single-kernel fused Adam is used: same maths, same
        # state_dict format (checkpoints load either way).
        opt = self.alg.optimizer
        if torch.device(self.device).type != "cuda" or type(opt) not in (torch.optim.Adam, torch.optim.AdamW):
            return
        group = {k: v for k, v in opt.param_groups[0].items() if k not in ("params", "foreach", "fused")}
        params = [p for g in opt.param_groups for p in g["params"]]
        self.alg.optimizer = type(opt)(params, **group, fused=True)

    def _iteration_end(self, it: int, total_it: int) -> None:
        # Called on EVERY rank after each iteration's update (upstream saves on rank 0 only, right after).
        signum = self.stop.agreed(self.ctx)
        if signum or it % self.cfg["save_interval"] == 0 or it == total_it - 1:
            self.rng_states = ft.gather_rng(self.ctx, self.env.env)
        if signum:
            path = os.path.join(self.logger.log_dir, f"model_{it}.pt") if self.logger.log_dir else None
            if self.logger.writer is not None:
                self.save(path)
            raise ft.GracefulStop(signum, path)

    def _configure_multi_gpu(self) -> None:
        # Upstream hard-codes init_process_group("nccl"), raises unless device == cuda:LOCAL_RANK and calls
        # torch.cuda.set_device: it cannot run on CPU. RunContext already made the group (gloo on CPU).
        self.is_distributed = self.ctx.is_distributed
        self.gpu_world_size = self.ctx.world_size if self.is_distributed else 1
        self.gpu_global_rank = self.ctx.rank if self.is_distributed else 0
        self.gpu_local_rank = self.ctx.local_rank if self.is_distributed else 0
        self.cfg["multi_gpu"] = (
            {"global_rank": self.ctx.rank, "local_rank": self.ctx.local_rank, "world_size": self.ctx.world_size}
            if self.is_distributed
            else None
        )

    def save(self, path: str, infos: dict | None = None) -> None:
        state = self.alg.save()
        state["iter"] = self.current_learning_iteration
        state["infos"] = infos
        state["task"] = self.task_id
        state["fleetlab_rng"] = self.rng_states  # every rank's, gathered at this iteration
        ft.atomic_torch_save(state, path)
        self.logger.save_model(path, self.current_learning_iteration)

    def load(self, path: str, load_cfg: dict | None = None, strict: bool = True) -> dict:
        """Upstream reads the file with torch.load(weights_only=False), which can run code from it. Here it is read
        by fleetlab.rl.checkpoint_reader (weights_only=True, and it must be an rsl_rl checkpoint), then handed to
        PPO.load as upstream does (load_state_dict copies the CPU tensors to the model's device). Returns the whole
        checkpoint (upstream returns its "infos"), so its RNG states need no second read."""
        loaded = read_checkpoint(path, LIBRARY)
        if self.alg.load(loaded, load_cfg, strict):
            self.current_learning_iteration = loaded["iter"]
        return loaded

    def checksum(self) -> str:
        return parameter_checksum([*self.alg.actor.state_dict().values(), *self.alg.critic.state_dict().values()])


def _cfg(args, play: bool) -> dict:
    cfg = agent_cfg(args.task, LIBRARY)
    if args.experiment_name:
        cfg["experiment_name"] = args.experiment_name
    if getattr(args, "run_name", None):
        cfg["run_name"] = args.run_name
    if getattr(args, "logger", None):
        cfg["logger"] = args.logger
    if not play and args.max_iterations is not None:
        cfg["max_iterations"] = args.max_iterations
    return apply_overrides(cfg, args.overrides)


def run_dir_parts(args) -> tuple[str, str, str]:
    """(library folder, experiment, run name) of a training run's directory, for make_run_dir and `fleetlab launch`."""
    cfg = _cfg(args, play=False)
    return LIBRARY, cfg["experiment_name"], cfg["run_name"]


def _setup(args, play: bool):
    ctx, env = common.context_and_env(args, play)
    cfg = _cfg(args, play)
    cfg["seed"] = ctx.seed
    return ctx, cfg, resolve(args.task).id, env


def train(args) -> dict:
    ctx, cfg, task_id, env = _setup(args, play=False)
    run_dir = common.make_run_dir(ctx, LIBRARY, cfg["experiment_name"], cfg["run_name"])
    if ctx.is_writer:
        print(f"[fleetlab] {task_id} with rsl_rl: {env.num_envs} envs per process x {ctx.world_size} process(es) "
              f"= {env.num_envs * ctx.world_size} envs; logs in {run_dir}", flush=True)
        common.write_json(os.path.join(run_dir, "params", "agent.json"), cfg)
        common.record_task(run_dir, task_id)
    print(f"[fleetlab] {ctx.summary()}", flush=True)

    runner = FleetOnPolicyRunner(RslRlVecEnvWrapper(env), cfg, log_dir=run_dir, ctx=ctx)
    runner.task_id = task_id
    iterations = cfg["max_iterations"]
    if args.resume or args.checkpoint:  # Isaac Lab's resume: max_iterations MORE iterations
        path = common.resolve_checkpoint(LIBRARY, cfg["experiment_name"], args.load_run, args.checkpoint)
        common.check_checkpoint_task(path, task_id)
        print(f"[fleetlab] resuming from {path}", flush=True)
        ft.restore_rng(ctx, runner.load(path).get("fleetlab_rng"), env)
    elif (path := ft.auto_resume_checkpoint(ctx, run_dir, r"model_\d+\.pt")) is not None:
        # a restart of `fleetlab launch`: continue to the same final iteration
        loaded = runner.load(path)
        runner.current_learning_iteration += 1  # the saved iteration is complete
        ft.restore_rng(ctx, loaded.get("fleetlab_rng"), env)
        iterations = max(cfg["max_iterations"] - runner.current_learning_iteration, 0)
        print(f"[fleetlab] auto-resume from {path}: iterations {runner.current_learning_iteration} to "
              f"{cfg['max_iterations'] - 1}", flush=True)

    runner.stop.install()
    start = time.time()
    runner.learn(num_learning_iterations=iterations, init_at_random_ep_len=True)
    wall = time.time() - start
    policy = _as_obs_policy(runner.get_inference_policy(device=ctx.device), env)
    steady = runner.logger.local_fps[1:] or runner.logger.local_fps  # iteration 1 carries the JIT compile
    perf = common.perf_record(env, statistics.median(steady) if steady else None, policy, measure_rollouts=args.bench)
    split = runner.logger.split[1:] or runner.logger.split
    if split:
        perf["rollout_s"] = statistics.median(c for c, _ in split)  # env steps + policy inference + storage
        perf["update_s"] = statistics.median(u for _, u in split)  # PPO epochs x minibatches
    summary = common.finish(ctx, run_dir, LIBRARY, task_id, env, runner.checksum(), runner.logger.last, wall, perf)
    if args.video and ctx.is_writer:
        path = common.record_video(env, policy, os.path.join(run_dir, "videos", "train.mp4"), args.video_length)
        print(f"[fleetlab] video: {path}", flush=True)
    return summary


@contextlib.contextmanager
def _quiet_onnx_export():
    """torch's ONNX exporter logs a warning per torchvision operator when torchvision is not installed (we use none)
    and raises a FutureWarning from inside torch's own pytree code: neither is about the user's policy."""
    registration = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = registration.level
    registration.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*treespec, LeafSpec", category=FutureWarning)
            yield
    finally:
        registration.setLevel(level)


def _as_obs_policy(policy, env):
    return lambda obs: policy(TensorDict({"policy": obs}, batch_size=[env.num_envs]))


def play(args) -> dict:
    ctx, cfg, task_id, env = _setup(args, play=True)
    path = common.resolve_checkpoint(LIBRARY, cfg["experiment_name"], args.load_run, args.checkpoint)
    common.check_checkpoint_task(path, task_id)
    print(f"[fleetlab] loading {path}", flush=True)
    runner = FleetOnPolicyRunner(RslRlVecEnvWrapper(env), cfg, log_dir=None, ctx=ctx)
    runner.load(path)
    policy = _as_obs_policy(runner.get_inference_policy(device=ctx.device), env)
    result = {"task": task_id, "checkpoint": path, **common.evaluate(env, policy, args.steps)}
    run_dir = os.path.dirname(path)
    if args.export:
        export_dir = os.path.join(run_dir, "exported")
        runner.export_policy_to_jit(export_dir, "policy.pt")
        with _quiet_onnx_export():
            runner.export_policy_to_onnx(export_dir, "policy.onnx")
        result["exported"] = [os.path.join(export_dir, "policy.pt"), os.path.join(export_dir, "policy.onnx")]
    if args.video:
        result["video"] = common.record_video(env, policy, os.path.join(run_dir, "videos", "play.mp4"), args.video_length)
    common.print_play_result(result)
    common.write_json(os.path.join(run_dir, "play.json"), result)
    return result
