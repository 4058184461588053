"""A trained policy at work: its mean return and success rate over a long evaluation, and a video of env 0."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

import numpy as np

from fleetlab.errors import FleetlabError

if TYPE_CHECKING:
    import torch


def evaluate(env, policy: Callable[[torch.Tensor], torch.Tensor], steps: int) -> dict:
    """Run `policy` (torch obs -> torch actions) for `steps` steps on every env of a fleetlab VecEnv. Reports the
    mean return of the episodes played: those that ended and the one each env is in at the last step (play runs one
    long episode per env, so the episodes that end are the failures alone; their mean would rank a policy that
    falls once in 4096 envs by that one fall), the fraction of the episodes begun that each failure term ended (Go1:
    the fall rate; each termination begins another), and the means over env-steps of the task's metric terms
    (Go1: velocity tracking errors), its `success` metric as success_fraction (cartpole: |pole| < 0.2 rad)."""
    import torch

    core = env.core
    obs, _ = env.reset()
    obs = obs["policy"]
    ret = torch.zeros(env.num_envs)
    returns = []
    terminated_episodes = 0
    logged = [i for i, name in enumerate(env.log_names) if name.startswith(("Metrics/", "Episode_Termination/"))]
    sums = None  # the metric means and termination counts, summed over steps on the env's device
    with torch.inference_mode():
        for _ in range(steps):
            obs_groups, reward, terminated, truncated, extras = env.step(policy(obs))
            obs = obs_groups["policy"]
            ret += reward.cpu()
            done = (terminated | truncated).cpu()
            returns += ret[done].tolist()
            terminated_episodes += int(terminated.sum())
            ret[done] = 0
            values = extras["log"].values[logged]
            sums = values.clone() if sums is None else sums + values
    totals = dict(zip([env.log_names[i] for i in logged], sums.cpu().tolist())) if sums is not None else {}
    episodes = env.num_envs + len(returns)
    out = {"steps": steps, "num_envs": env.num_envs, "episodes": episodes}
    out["mean_return"] = float(np.mean(returns + ret.tolist()))
    for name, time_out in zip(core.terminations.names, core.terminations.time_outs):
        if not time_out:
            out[f"episodes_ended_by_{name}"] = int(round(totals.get(f"Episode_Termination/{name}", 0)))
    out["terminated_fraction"] = terminated_episodes / episodes
    metrics = {name: totals[f"Metrics/{name}"] / steps for name in core.metrics.names} if steps else {}
    if core.cfg.success:
        out["success_name"] = core.metrics.descriptions[core.cfg.success]
        out["success_fraction"] = metrics.pop(core.cfg.success)
    if metrics:
        out["metrics"] = metrics
    return out


def record_video(env, policy: Callable[[torch.Tensor], torch.Tensor], path: str, length: int,
                 fps: int | None = None) -> str:
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
            f"offscreen rendering failed ({err}); set MUJOCO_GL=egl (GPU) or MUJOCO_GL=osmesa "
            "(CPU, apt install libosmesa6)"
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
