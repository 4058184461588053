"""What every library adapter shares: run directories, checkpoints lookup, console progress, evaluation and video."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import re
import time
from typing import Callable

import numpy as np
import torch

from fleetlab.distributed import RunContext
from fleetlab.errors import FleetlabError

LOG_ROOT = "logs"


def run_dir_path(library: str, experiment_name: str, stamp: str | None = None, run_name: str = "") -> str:
    """logs/<library>/<experiment>/<timestamp>[_<run_name>], as Isaac Lab names it."""
    stamp = stamp or datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    return os.path.abspath(os.path.join(LOG_ROOT, library, experiment_name, stamp + (f"_{run_name}" if run_name else "")))


def make_run_dir(ctx: RunContext, library: str, experiment_name: str, run_name: str = "") -> str:
    """The run directory: the one `fleetlab launch` chose (every restart of the group trains there), else a new
    run_dir_path. Rank 0 decides (clocks and start times differ across nodes) and broadcasts it, so every rank
    agrees; only rank 0 creates it."""
    from fleetlab.rl.fault_tolerance import launched_run_dir

    run_dir = ctx.broadcast_object(launched_run_dir() or run_dir_path(library, experiment_name, run_name=run_name))
    if ctx.is_writer:
        os.makedirs(run_dir, exist_ok=True)
    return run_dir


def find_checkpoint(experiment_dir: str, load_run: str = ".*", checkpoint: str = r"model_.*\.pt", subdir: str = "") -> str:
    """The checkpoint to resume or play, chosen as Isaac Lab's get_checkpoint_path does: the last run (sorted by
    name, i.e. time) matching `load_run`, then its last file matching `checkpoint` in natural order."""
    if not os.path.isdir(experiment_dir):
        raise FleetlabError(f"no runs to load: '{experiment_dir}' does not exist (train first, or pass --checkpoint PATH)")
    runs = sorted(d for d in os.listdir(experiment_dir) if os.path.isdir(os.path.join(experiment_dir, d)) and re.match(load_run, d))
    if not runs:
        raise FleetlabError(f"no run in '{experiment_dir}' matches --load_run '{load_run}'")
    run_dir = os.path.join(experiment_dir, runs[-1], subdir)
    if not os.path.isdir(run_dir):
        raise FleetlabError(f"no checkpoint folder '{run_dir}' (did that run save any?)")
    natural = lambda s: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]  # noqa: E731
    ckpts = sorted((f for f in os.listdir(run_dir) if re.match(checkpoint, f)), key=natural)
    if not ckpts:
        raise FleetlabError(f"no checkpoint in '{run_dir}' matches --checkpoint '{checkpoint}'")
    return os.path.abspath(os.path.join(run_dir, ckpts[-1]))


def resolve_checkpoint(library: str, experiment_name: str, load_run: str | None, checkpoint: str | None,
                       default: str = r"model_.*\.pt", subdir: str = "") -> str:
    """A direct path wins; otherwise search the experiment's runs with the --load_run/--checkpoint patterns."""
    if checkpoint and os.path.isfile(checkpoint):
        return os.path.abspath(checkpoint)
    if checkpoint and (os.sep in checkpoint or checkpoint.endswith((".pt", ".pth", ".pickle"))):
        raise FleetlabError(f"checkpoint '{checkpoint}' does not exist")
    experiment_dir = os.path.join(LOG_ROOT, library, experiment_name)
    return find_checkpoint(experiment_dir, load_run or ".*", checkpoint or default, subdir)


@contextlib.contextmanager
def printed_by_writer_only(ctx: RunContext):
    """Inside this block only global rank 0 prints to stdout: the libraries print their model summaries and set-up
    notes on every rank when they build the agent (rsl_rl's actor/critic, rl_games' "build mlp", seeds, ranks)."""
    if ctx.is_writer:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def write_json(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)


class Progress:
    """One console line per iteration: iteration, FPS (summed over ranks), return, ETA."""

    def __init__(self, total_iterations: int, start_iteration: int = 0):
        self.total = total_iterations
        self.start = start_iteration
        self.t0 = time.time()

    def line(self, it: int, fps: float, **metrics: float) -> str:
        done = it + 1 - self.start
        eta = (time.time() - self.t0) / max(done, 1) * (self.total - it - 1)
        parts = [f"it {it + 1:>5}/{self.total}", f"fps {fps:>10,.0f}"]
        parts += [f"{k} {v:9.4g}" for k, v in metrics.items() if v is not None]
        parts.append(f"ETA {datetime.timedelta(seconds=int(max(eta, 0)))}")
        return " | ".join(parts)


def context_and_env(args, play: bool, ml_framework: str = "torch"):
    """The RunContext (process group started) and the VecEnv for a train/play run, from Isaac Lab's flags.
    Training defaults to 4096 envs per process, play to 32; play gets the long evaluation episode."""
    from fleetlab.envs import make

    ctx = RunContext.from_env(
        distributed=args.distributed, device=args.device, seed=42 if args.seed is None else args.seed,
        ml_framework=ml_framework, timeout_s=args.dist_timeout,
    ).init_process_group()
    torch.manual_seed(ctx.seed)
    num_envs = args.num_envs if args.num_envs is not None else (32 if play else 4096)
    if play:
        env = make_play_env(args.task, num_envs, ctx.device, ctx.seed, args.physics_impl, args.steps)
    else:
        env = make(args.task, num_envs=num_envs, device=ctx.device, seed=ctx.seed, impl=args.physics_impl)
    return ctx, env


def make_play_env(task_id: str, num_envs: int, device: str, seed: int, impl: str, steps: int):
    """The env that `play` evaluates in: the time-out is lifted to cover all `steps`, so each env runs ONE
    continuous episode and "% of steps balanced" measures the policy, not the transients after periodic resets."""
    from fleetlab.envs import make
    from fleetlab.envs.registry import resolve

    cfg = resolve(task_id).make_task().cfg
    episode_s = max(cfg.episode_length_s, (steps + 1) * cfg.sim_dt * cfg.decimation)
    return make(task_id, num_envs=num_envs, device=device, seed=seed, impl=impl, episode_length_s=episode_s)


def evaluate(env, policy: Callable[[torch.Tensor], torch.Tensor], steps: int) -> dict:
    """Run `policy` (torch obs -> torch actions) for `steps` steps on every env of a fleetlab VecEnv. Reports the
    mean return of finished episodes and, for tasks that define one, the fraction of env-steps that succeed
    (cartpole: |pole| < 0.2 rad)."""
    obs, _ = env.reset()
    obs = obs["policy"]
    ret = torch.zeros(env.num_envs)
    returns, successes = [], []
    success_fn = env.core.task.success
    with torch.inference_mode():
        for _ in range(steps):
            obs_groups, reward, terminated, truncated, _ = env.step(policy(obs))
            obs = obs_groups["policy"]
            ret += reward.cpu()
            done = (terminated | truncated).cpu()
            returns += ret[done].tolist()
            ret[done] = 0
            if success_fn is not None:
                successes.append(np.asarray(success_fn(env.cfg, env.state)).mean())
    out = {"steps": steps, "num_envs": env.num_envs, "episodes": len(returns)}
    out["mean_return"] = float(np.mean(returns)) if returns else float(ret.mean())
    if successes:
        out["success_name"] = env.core.task.success_name
        out["success_fraction"] = float(np.mean(successes))
    return out


def record_video(env, policy: Callable[[torch.Tensor], torch.Tensor], path: str, length: int, fps: int | None = None) -> str:
    """An mp4 of env 0 under `policy`, rendered with MuJoCo's offscreen renderer (MUJOCO_GL=egl or osmesa)."""
    import imageio
    import mujoco

    mj_model = env.core.physics.mj_model
    data = mujoco.MjData(mj_model)
    try:
        renderer = mujoco.Renderer(mj_model, height=480, width=640)
    except Exception as err:  # no GL context
        raise FleetlabError(
            f"offscreen rendering failed ({err}); set MUJOCO_GL=egl (GPU) or MUJOCO_GL=osmesa (CPU, apt install libosmesa6)"
        ) from None
    camera = "side" if mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, "side") >= 0 else -1
    obs = env.reset()[0]["policy"]
    frames = []
    with torch.inference_mode():
        for _ in range(length):
            obs = env.step(policy(obs))[0]["policy"]
            data.qpos[:] = np.asarray(env.state.qpos[0])
            data.qvel[:] = np.asarray(env.state.qvel[0])
            mujoco.mj_forward(mj_model, data)
            renderer.update_scene(data, camera=camera)
            frames.append(renderer.render())
    renderer.close()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    imageio.mimwrite(path, frames, fps=fps or int(round(1 / env.step_dt)), macro_block_size=1)
    return path


def record_task(run_dir: str, task_id: str) -> None:
    write_json(os.path.join(run_dir, "params", "task.json"), {"task": task_id})


def check_checkpoint_task(path: str, task_id: str) -> None:
    """Refuse a checkpoint trained on another task (its run dir records the task id), with a one-line error."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(3):
        marker = os.path.join(folder, "params", "task.json")
        if os.path.isfile(marker):
            with open(marker) as f:
                trained = json.load(f)["task"]
            if trained != task_id:
                raise FleetlabError(f"checkpoint '{path}' was trained on '{trained}', not '{task_id}'")
            return
        folder = os.path.dirname(folder)


def rollout_fps(env, policy: Callable[[torch.Tensor], torch.Tensor] | None, steps: int = 200) -> float:
    """Env-steps/s of `steps` steps through the torch view: random actions (policy None) or `policy(obs)`."""
    obs = env.observations["policy"]
    device = torch.device(env.device)
    with torch.inference_mode():
        for i in range(steps + 1):
            if i == 1:  # step 0 may compile
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                t0 = time.perf_counter()
            action = torch.rand(env.num_envs, env.num_actions, device=device) * 2 - 1 if policy is None else policy(obs)
            obs = env.step(action)[0]["policy"]
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return steps * env.num_envs / (time.perf_counter() - t0)


def perf_record(env, train_fps: float | None, policy=None, measure_rollouts: bool = False) -> dict:
    """This rank's figures for `fleetlab bench`: Isaac Lab's three FPS (env only, with policy inference, with
    training), the env's JIT time, the time from process start to now, and peak device memory."""
    import psutil

    rec = {"train_fps": train_fps, "jit_s": env.compile_s, "startup_s": getattr(env, "startup_s", None),
           "process_s": time.time() - psutil.Process().create_time()}
    if measure_rollouts:
        rec["env_fps"] = rollout_fps(env, None)
        rec["inference_fps"] = rollout_fps(env, policy) if policy is not None else None
    if str(env.device).startswith("cuda"):
        torch_peak = torch.cuda.max_memory_allocated(torch.device(env.device))
        stats = env.core.physics.device.memory_stats() or {}
        rec["peak_mem_mb"] = (torch_peak + stats.get("peak_bytes_in_use", 0)) / 2**20
    return rec


def _aggregate(perfs: list[dict]) -> dict:
    out = {}
    for key in ("train_fps", "env_fps", "inference_fps"):
        vals = [p.get(key) for p in perfs]
        out[key] = sum(vals) if vals and all(v is not None for v in vals) else None  # summed over ranks
    for key in dict.fromkeys(k for p in perfs for k in p if not k.endswith("_fps")):
        vals = [p[key] for p in perfs if p.get(key) is not None]
        out[key] = max(vals) if vals else None  # times and memory: the slowest / largest rank
    return out


def finish(ctx: RunContext, run_dir: str, library: str, task_id: str, env, checksum: str, last: dict, wall_s: float,
           perf: dict | None = None) -> dict:
    """End of training on every rank: print this rank's parameter checksum and seed, gather them on rank 0, and
    write summary.json (the checksums must be identical across ranks; the seeds must differ)."""
    mine = {"rank": ctx.rank, "local_rank": ctx.local_rank, "node_rank": ctx.node_rank, "pid": os.getpid(),
            "seed": ctx.seed, "device": ctx.device, "checksum": checksum, "perf": perf or {}}
    print(f"[fleetlab] rank {ctx.rank}: seed {ctx.seed}, parameter checksum {checksum}", flush=True)
    ranks = ctx.all_gather_object(mine)
    summary = {
        "task": task_id,
        "library": library,
        "world_size": ctx.world_size,
        "num_envs_per_process": env.num_envs,
        "num_envs_total": env.num_envs * ctx.world_size,
        "wall_s": wall_s,
        "final": last,
        "ranks": ranks,
        "checksums_identical": len({r["checksum"] for r in ranks}) == 1,
        "perf": _aggregate([r["perf"] for r in ranks]),
    }
    if ctx.is_writer:
        write_json(os.path.join(run_dir, "summary.json"), summary)
        print(f"[fleetlab] done in {wall_s:.1f}s; checksums identical across ranks: {summary['checksums_identical']}; "
              f"summary: {os.path.join(run_dir, 'summary.json')}", flush=True)
    return summary


def print_play_result(result: dict) -> None:
    over = f"over {result['episodes']} episodes" if result["episodes"] else f"over one {result['steps']}-step episode per env"
    line = f"[fleetlab] play {result['task']}: mean return {result['mean_return']:.3f} {over}"
    if "success_fraction" in result:
        line += f"; {result['success_name']} for {100 * result['success_fraction']:.1f}% of {result['steps']} steps"
    print(line, flush=True)
