"""skrl (2.1.x) adapter: PyTorch under torchrun, JAX under jax.distributed (skrl's launcher or ours).

skrl configures distributed training when it is IMPORTED (torch: init_process_group("nccl") + cuda.set_device;
JAX: jax.distributed.initialize). So this module imports skrl only inside train()/play(), after RunContext has set
up the process group / JAX runtime, and with skrl's own calls made no-ops (rl/skrl_torch.py, rl/skrl_jax.py).
"""

from __future__ import annotations

import datetime
import os
import time

from fleetlab.distributed import RunContext
from fleetlab.envs.registry import agent_cfg, resolve
from fleetlab.rl import common
from fleetlab.rl.args import apply_overrides

LIBRARY = "skrl"


class SkrlEnvMixin:
    """What the torch and JAX skrl env wrappers share (they differ only in reset/step): Isaac Lab-style spaces, no
    critic state, and a clock on env steps, giving a training FPS that leaves out the first rollout and update
    (JIT); skrl's trainer reports no FPS of its own."""

    num_envs: int

    def __init__(self, env):
        super().__init__(env)  # skrl's Wrapper, next in the MRO
        self._obs = None
        self._ticks: list[float] = []

    @property
    def observation_space(self):
        return self._unwrapped.single_observation_space["policy"]

    @property
    def action_space(self):
        return self._unwrapped.single_action_space

    @property
    def state_space(self):
        return None

    def state(self):
        return None

    def render(self, *args, **kwargs):
        return None

    def close(self):
        self._env.close()

    def _tick(self) -> None:
        self._ticks.append(time.perf_counter())

    def steady_fps(self, rollouts: int) -> float | None:
        ticks = self._ticks[rollouts:]
        if len(ticks) < 2:
            return None
        return (len(ticks) - 1) * self.num_envs / (ticks[-1] - ticks[0])


def _framework_module(ctx: RunContext, framework: str):
    if framework == "torch":
        from fleetlab.distributed.torch_pg import group_made_by_run_context

        with group_made_by_run_context(ctx.device):
            from fleetlab.rl import skrl_torch

        return skrl_torch
    from fleetlab.rl import skrl_jax  # RunContext.init_process_group already ran jax.distributed

    return skrl_jax


def _setup(args, play: bool):
    framework = getattr(args, "ml_framework", "torch")
    if framework not in ("torch", "jax"):
        raise ValueError(f"--ml_framework must be 'torch' or 'jax', got '{framework}'")
    ctx, env = common.context_and_env(args, play, ml_framework=framework)
    cfg = apply_overrides(agent_cfg(args.task, LIBRARY), args.overrides)
    cfg["seed"] = 42 if args.seed is None else args.seed  # skrl's set_seed adds the global rank itself
    if not play and args.max_iterations is not None:
        cfg["trainer"]["timesteps"] = args.max_iterations * cfg["agent"]["rollouts"]
    cfg["trainer"]["close_environment_at_exit"] = False
    cfg["trainer"]["disable_progressbar"] = not ctx.is_writer
    return ctx, framework, env, cfg


def _experiment_dir(ctx: RunContext, cfg: dict, framework: str) -> str:
    name = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S") + f"_ppo_{framework}"
    name = ctx.broadcast_object(name)
    directory = os.path.abspath(os.path.join(common.LOG_ROOT, LIBRARY, cfg["agent"]["experiment"]["directory"]))
    cfg["agent"]["experiment"]["directory"] = directory
    cfg["agent"]["experiment"]["experiment_name"] = name
    run_dir = os.path.join(directory, name)
    if ctx.is_writer:
        os.makedirs(run_dir, exist_ok=True)
    return run_dir


def train(args) -> dict:
    ctx, framework, env, cfg = _setup(args, play=False)
    task_id = resolve(args.task).id
    run_dir = _experiment_dir(ctx, cfg, framework)
    if ctx.is_writer:
        print(f"[fleetlab] {task_id} with skrl-{framework}: {env.num_envs} envs per process x {ctx.world_size} "
              f"process(es) = {env.num_envs * ctx.world_size} envs; logs in {run_dir}", flush=True)
        common.record_task(run_dir, task_id)
        common.write_json(os.path.join(run_dir, "params", "agent.json"), cfg)
    print(f"[fleetlab] {ctx.summary()}", flush=True)
    fw = _framework_module(ctx, framework)
    runner, wrapped = fw.build_runner(env, cfg)
    if args.checkpoint:
        path = _checkpoint(os.path.basename(cfg["agent"]["experiment"]["directory"]), framework, args.checkpoint)
        common.check_checkpoint_task(path, task_id)
        runner.agent.load(path)
    start = time.time()
    runner.run("train")
    wall = time.time() - start
    steps = cfg["trainer"]["timesteps"] * env.num_envs * ctx.world_size
    last = {"env_steps_total": steps, "fps_with_jit": steps / wall}
    if framework == "jax":
        last["jax_backend_compiles"] = fw.BACKEND_COMPILES[0]
    policy = fw.policy_fn(runner.agent)
    perf = common.perf_record(env, wrapped.steady_fps(cfg["agent"]["rollouts"]), policy, measure_rollouts=args.bench)
    summary = common.finish(ctx, run_dir, f"{LIBRARY}-{framework}", task_id, env, fw.checksum(runner.agent), last, wall,
                            perf)
    if args.video and ctx.is_writer:
        path = common.record_video(env, policy, os.path.join(run_dir, "videos", "train.mp4"), args.video_length)
        print(f"[fleetlab] video: {path}", flush=True)
    return summary


def play(args) -> dict:
    ctx, framework, env, cfg = _setup(args, play=True)
    task_id = resolve(args.task).id
    path = _checkpoint(cfg["agent"]["experiment"]["directory"], framework, args.checkpoint)
    common.check_checkpoint_task(path, task_id)
    print(f"[fleetlab] loading {path}", flush=True)
    cfg["agent"]["experiment"]["write_interval"] = 0
    cfg["agent"]["experiment"]["checkpoint_interval"] = 0
    fw = _framework_module(ctx, framework)
    runner, _ = fw.build_runner(env, cfg)
    runner.agent.load(path)
    policy = fw.policy_fn(runner.agent)
    result = {"task": task_id, "checkpoint": path, **common.evaluate(env, policy, args.steps)}
    run_dir = os.path.dirname(os.path.dirname(path))  # <run>/checkpoints/<file>
    if args.video:
        result["video"] = common.record_video(env, policy, os.path.join(run_dir, "videos", "play.mp4"), args.video_length)
    common.print_play_result(result)
    common.write_json(os.path.join(run_dir, "play.json"), result)
    return result


def _checkpoint(experiment: str, framework: str, checkpoint: str | None) -> str:
    """--checkpoint PATH, else the last run of this framework: its best_agent (skrl's pick), else its last agent_*."""
    suffix = r"\.pickle" if framework == "jax" else r"\.pt"
    runs = rf".*_ppo_{framework}$"
    try:
        return common.resolve_checkpoint(LIBRARY, experiment, runs, checkpoint, default=rf"best_agent{suffix}",
                                         subdir="checkpoints")
    except FileNotFoundError:
        if checkpoint:
            raise
        return common.resolve_checkpoint(LIBRARY, experiment, runs, None, default=rf"agent_.*{suffix}", subdir="checkpoints")
