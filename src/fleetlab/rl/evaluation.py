"""A trained policy at work: its mean return and success rate over a long evaluation, and a video of env 0."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Callable

import jax
import numpy as np

from fleetlab.errors import FleetlabError

if TYPE_CHECKING:
    import torch


def evaluate(env, policy: Callable[[torch.Tensor], torch.Tensor], steps: int) -> dict:
    """Run `policy` (torch obs -> torch actions) for `steps` steps on every env of a fleetlab VecEnv. Reports the
    mean return of the episodes played: those that ended and the one each env is in at the last step (play runs one
    long episode per env, so the episodes that end are the failures alone; their mean would rank a policy that
    falls once in 4096 envs by that one fall) and, for tasks that define one, the fraction of env-steps that succeed
    (cartpole: |pole| < 0.2 rad), the fraction of the episodes begun that ended by termination (Go1: the fall rate;
    play runs one long episode per env, and each termination begins another), and the means over env-steps of the task's play metrics (Go1: velocity tracking errors)."""
    import torch

    task = env.core.task
    obs, _ = env.reset()
    obs = obs["policy"]
    ret = torch.zeros(env.num_envs)
    returns, successes, metrics = [], [], {}
    terminated_episodes = 0
    if task.play_metrics is not None:  # written for one env, like the task's other functions
        play_metrics = jax.jit(jax.vmap(functools.partial(task.play_metrics, env.cfg)))
    with torch.inference_mode():
        for _ in range(steps):
            # the metrics read the state the policy acts in: the obs it sees, the command it follows
            obs_groups, reward, terminated, truncated, _ = env.step(policy(obs))
            obs = obs_groups["policy"]
            ret += reward.cpu()
            done = (terminated | truncated).cpu()
            returns += ret[done].tolist()
            terminated_episodes += int(terminated.sum())
            ret[done] = 0
            if task.success is not None:
                successes.append(np.asarray(task.success(env.cfg, env.state)).mean())
            if task.play_metrics is not None:
                for name, value in play_metrics(env.state).items():
                    metrics.setdefault(name, []).append(float(np.asarray(value).mean()))
    out = {"steps": steps, "num_envs": env.num_envs, "episodes": len(returns) + env.num_envs}
    out["mean_return"] = float(np.mean(returns + ret.tolist()))
    out[f"episodes_ended_by_{task.termination_name}"] = terminated_episodes
    out["terminated_fraction"] = terminated_episodes / (env.num_envs + len(returns))
    if successes:
        out["success_name"] = task.success_name
        out["success_fraction"] = float(np.mean(successes))
    if metrics:
        out["metrics"] = {name: float(np.mean(values)) for name, values in metrics.items()}
    return out


def record_video(env, policy: Callable[[torch.Tensor], torch.Tensor], path: str, length: int, fps: int | None = None) -> str:
    """An mp4 of env 0 under `policy`, rendered with MuJoCo's offscreen renderer (MUJOCO_GL=egl or osmesa)."""
    import imageio
    import mujoco
    import torch

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
