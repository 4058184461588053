"""skrl (2.1.x) adapter: PyTorch under torchrun, JAX under jax.distributed (skrl's launcher or ours).

skrl configures distributed training when it is IMPORTED (torch: init_process_group("nccl") + cuda.set_device;
JAX: jax.distributed.initialize). So this module imports skrl only inside train()/play(), after RunContext has set
up the process group / JAX runtime, and with skrl's own calls made no-ops (rl/skrl_torch.py, rl/skrl_jax.py).
"""

from __future__ import annotations

import os
import re
import time

from fleetlab.distributed import RunContext
from fleetlab.envs.registry import agent_cfg, resolve
from fleetlab.errors import FleetlabError
from fleetlab.rl import common
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.args import apply_overrides
from fleetlab.rl.checkpoint_reader import read_checkpoint

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
    from fleetlab.rl import (
        skrl_jax,  # RunContext.init_process_group already ran jax.distributed
    )

    return skrl_jax


def _cfg(args, play: bool) -> dict:
    cfg = apply_overrides(agent_cfg(args.task, LIBRARY), args.overrides)
    cfg["seed"] = 42 if args.seed is None else args.seed  # skrl's set_seed adds the global rank itself
    if not play and args.max_iterations is not None:
        cfg["trainer"]["timesteps"] = args.max_iterations * cfg["agent"]["rollouts"]
    experiment = cfg["agent"]["experiment"]
    for key in ("write_interval", "checkpoint_interval"):
        if experiment.get(key) == "auto":  # skrl's rule, fixed here on the FULL run (a resumed run is shorter)
            experiment[key] = int(cfg["trainer"]["timesteps"] / 10)
    cfg["trainer"]["close_environment_at_exit"] = False
    return cfg


def run_dir_parts(args) -> tuple[str, str, str]:
    """(library folder, experiment, run name) of a training run's directory, for make_run_dir and `fleetlab launch`."""
    return LIBRARY, _cfg(args, play=False)["agent"]["experiment"]["directory"], f"ppo_{_framework(args)}"


def _framework(args) -> str:
    framework = getattr(args, "ml_framework", "torch")
    if framework not in ("torch", "jax"):
        raise FleetlabError(f"--ml_framework must be 'torch' or 'jax', got '{framework}'")
    return framework


def _setup(args, play: bool):
    framework = _framework(args)
    ctx, env = common.context_and_env(args, play, ml_framework=framework)
    cfg = _cfg(args, play)
    cfg["trainer"]["disable_progressbar"] = not ctx.is_writer
    return ctx, framework, env, cfg


def _resume_point(ctx: RunContext, run_dir: str) -> tuple[str | None, dict | None]:
    """Under `fleetlab launch`: the latest agent_<t> checkpoint of this run with its fleetlab_<t>.pt (timestep and
    RNG states) written after it, i.e. the latest COMPLETE checkpoint; both as rank 0 sees them."""
    agent_path = state_path = None
    if ctx.is_writer:
        folder = os.path.join(run_dir, "checkpoints")
        state_path = ft.latest_checkpoint(folder, r"fleetlab_\d+\.pt")
        if state_path is not None:
            t = re.search(r"(\d+)", os.path.basename(state_path)).group(1)
            agent_path = next((os.path.join(folder, f) for f in os.listdir(folder) if re.fullmatch(rf"agent_{t}\.\w+", f)), None)
            state_path = state_path if agent_path else None
    agent_path, state_path = ft.share_checkpoint(ctx, agent_path), ft.share_checkpoint(ctx, state_path)
    return agent_path, read_checkpoint(state_path) if state_path else None


class TrainingHooks:
    """Hooks on skrl's agent, which skrl's trainer calls on every rank with the timestep:
    - a resumed run starts its trainer at 0, so the agent is handed timestep + offset (and the full total);
    - upstream writes checkpoints with torch.save / open(path, "wb") straight to the final name: made atomic;
    - every rank's RNG state is gathered at checkpoint timesteps and written by rank 0 as fleetlab_<t>.pt right
      after skrl's agent_<t> file: that pair is a complete checkpoint;
    - SIGINT/SIGTERM, checked at rollout boundaries on all ranks, end training after a checkpoint."""

    def __init__(self, agent, fw, ctx: RunContext, env, cfg: dict, offset: int, task_id: str):
        self.agent, self.fw, self.ctx, self.env = agent, fw, ctx, env
        self.offset, self.total = offset, offset + cfg["trainer"]["timesteps"]
        self.rollouts = cfg["agent"]["rollouts"]
        self.interval = cfg["agent"]["experiment"]["checkpoint_interval"]  # skrl zeroes it on ranks > 0
        self.task_id, self.stop, self.rng_states = task_id, ft.StopRequest().install(), None
        self.folder = os.path.join(agent.experiment_dir, "checkpoints")
        for name in ("pre_interaction", "act", "record_transition"):
            setattr(agent, name, self._shifted(getattr(agent, name)))
        self._post, self._write = agent.post_interaction, agent.write_checkpoint
        agent.post_interaction, agent.write_checkpoint = self.post_interaction, self.write_checkpoint

    def _shifted(self, method):
        def call(*args, timestep, timesteps, **kwargs):
            return method(*args, timestep=timestep + self.offset, timesteps=self.total, **kwargs)

        return call

    def write_checkpoint(self, timestep: int, timesteps: int) -> None:
        with self.fw.atomic_checkpoints():
            self._write(timestep=timestep, timesteps=timesteps)
        ft.atomic_torch_save({"timestep": timestep, "rng": self.rng_states, "task": self.task_id},
                             os.path.join(self.folder, f"fleetlab_{timestep}.pt"))

    def post_interaction(self, *, timestep: int, timesteps: int) -> None:
        t = timestep + self.offset + 1  # skrl's own +1: the number of steps done
        signum = self.stop.agreed(self.ctx) if t % self.rollouts == 0 else 0
        if signum or (self.interval and t % self.interval == 0):
            self.rng_states = ft.gather_rng(self.ctx, self.env, self.fw.rng_extra())
        self._post(timestep=t - 1, timesteps=self.total)
        if signum:
            if self.ctx.is_writer:
                self.write_checkpoint(timestep=t, timesteps=self.total)
            raise ft.GracefulStop(signum, os.path.join(self.folder, f"agent_{t}"))


def train(args) -> dict:
    ctx, framework, env, cfg = _setup(args, play=False)
    task_id = resolve(args.task).id
    run_dir = common.make_run_dir(ctx, LIBRARY, cfg["agent"]["experiment"]["directory"], f"ppo_{framework}")
    cfg["agent"]["experiment"]["directory"], cfg["agent"]["experiment"]["experiment_name"] = os.path.split(run_dir)
    if ctx.is_writer:
        print(f"[fleetlab] {task_id} with skrl-{framework}: {env.num_envs} envs per process x {ctx.world_size} "
              f"process(es) = {env.num_envs * ctx.world_size} envs; logs in {run_dir}", flush=True)
        common.record_task(run_dir, task_id)
        common.write_json(os.path.join(run_dir, "params", "agent.json"), cfg)
    print(f"[fleetlab] {ctx.summary()}", flush=True)
    path, state = None, None
    if args.checkpoint:
        path = _checkpoint(os.path.basename(cfg["agent"]["experiment"]["directory"]), framework, args.checkpoint)
        common.check_checkpoint_task(path, task_id)
    elif ft.launched_run_dir():
        path, state = _resume_point(ctx, run_dir)
    modules = read_checkpoint(path, LIBRARY) if path is not None else None  # a bad file fails before skrl starts
    fw = _framework_module(ctx, framework)
    offset = min(state["timestep"], cfg["trainer"]["timesteps"]) if state else 0
    cfg["trainer"]["timesteps"] -= offset  # the trainer runs the rest; TrainingHooks shifts its timesteps
    runner, wrapped = fw.build_runner(env, cfg)
    hooks = TrainingHooks(runner.agent, fw, ctx, env, cfg, offset, task_id)
    if modules is not None:
        fw.load_agent(runner.agent, modules)  # models, optimizer, normalizers
        if state and ft.restore_rng(ctx, state["rng"], env):
            fw.set_rng_extra(state["rng"][ctx.rank])
        print(f"[fleetlab] resuming from {path} at timestep {offset}/{hooks.total}", flush=True)
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
    modules = read_checkpoint(path, LIBRARY)
    cfg["agent"]["experiment"]["write_interval"] = 0
    cfg["agent"]["experiment"]["checkpoint_interval"] = 0
    fw = _framework_module(ctx, framework)
    runner, _ = fw.build_runner(env, cfg)
    fw.load_agent(runner.agent, modules)
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
    except FleetlabError:
        if checkpoint:
            raise
        return common.resolve_checkpoint(LIBRARY, experiment, runs, None, default=rf"agent_.*{suffix}", subdir="checkpoints")
