"""The baseline of `fleetlab bench`: a hand-written, batched, pure-torch cartpole with the same masses, damping,
timing, rewards, terminations and resets as Fleet-Cartpole-v0, and the same torch API as VecEnv. Training rsl_rl on
it and on the MJX env in the same run shows what the physics engine (and the JAX <-> torch hop) costs."""

from __future__ import annotations

import torch

from fleetlab.tasks.cartpole.cfg import cartpole

CART_MASS, POLE_MASS, POLE_COM, POLE_LENGTH, SLIDER_DAMPING, GRAVITY = 1.0, 0.1, 0.5, 1.0, 10.0, 9.81


class TorchCartpole:
    def __init__(self, num_envs: int, device: str = "cpu", seed: int = 0):
        cfg = cartpole()  # the numbers of Fleet-Cartpole-v0's config
        self.num_envs, self.device, self.cfg = num_envs, device, cfg
        self.num_actions, self.num_obs = 1, 4
        self.sim_dt, self.decimation = cfg.scene.sim_dt, cfg.scene.decimation
        self.step_dt = self.sim_dt * self.decimation
        reset = cfg.events["reset_joints"].params
        (self.cart_pos_range, self.pole_pos_range), (self.cart_vel_range, self.pole_vel_range) = (
            reset["position_range"], reset["velocity_range"])
        self.action_scale = cfg.actions["joint_effort"].scale
        self.max_cart_pos = cfg.terminations["cart_out_of_bounds"].params["bounds"][1]
        self.weights = {name: term.weight for name, term in cfg.rewards.items()}
        self.max_episode_length = int(round(cfg.episode_length_s / self.step_dt))
        self.compile_s = 0.0
        self.generator = torch.Generator(device=device).manual_seed(seed)
        self.q = torch.zeros(num_envs, 2, device=device)
        self.v = torch.zeros(num_envs, 2, device=device)
        self.length = torch.zeros(num_envs, dtype=torch.long, device=device)
        self._reset(torch.ones(num_envs, dtype=torch.bool, device=device))

    def _uniform(self, n, lo_hi):
        return torch.rand(n, device=self.device, generator=self.generator) * (lo_hi[1] - lo_hi[0]) + lo_hi[0]

    def _reset(self, mask: torch.Tensor) -> None:
        n = self.num_envs
        fresh_q = torch.stack([self._uniform(n, self.cart_pos_range), self._uniform(n, self.pole_pos_range)], 1)
        fresh_v = torch.stack([self._uniform(n, self.cart_vel_range), self._uniform(n, self.pole_vel_range)], 1)
        m = mask[:, None]
        self.q, self.v = torch.where(m, fresh_q, self.q), torch.where(m, fresh_v, self.v)
        self.length = torch.where(mask, 0, self.length)

    def _physics(self, force: torch.Tensor) -> None:
        inertia = POLE_MASS * POLE_LENGTH**2 / 3
        for _ in range(self.decimation):
            theta, x_dot, theta_dot = self.q[:, 1], self.v[:, 0], self.v[:, 1]
            ml_cos = POLE_MASS * POLE_COM * torch.cos(theta)
            a = CART_MASS + POLE_MASS
            rhs_x = force + POLE_MASS * POLE_COM * torch.sin(theta) * theta_dot**2 - SLIDER_DAMPING * x_dot
            rhs_t = POLE_MASS * GRAVITY * POLE_COM * torch.sin(theta)
            det = a * inertia - ml_cos**2
            acc = torch.stack([(inertia * rhs_x - ml_cos * rhs_t) / det, (a * rhs_t - ml_cos * rhs_x) / det], 1)
            self.v = self.v + acc * self.sim_dt
            self.q = self.q + self.v * self.sim_dt

    @property
    def observations(self):
        return {"policy": torch.cat([self.q[:, :1], self.q[:, 1:], self.v[:, :1], self.v[:, 1:]], 1)}

    @property
    def episode_length_buf(self):
        return self.length.clone()

    @episode_length_buf.setter
    def episode_length_buf(self, value):
        self.length = value.to(self.device, torch.long)

    def reset(self):
        return self.observations, {}

    def step(self, action: torch.Tensor):
        self._physics(torch.clamp(action[:, 0] * self.action_scale, -400, 400))
        self.length += 1
        terminated = self.q[:, 0].abs() > self.max_cart_pos
        truncated = (self.length >= self.max_episode_length) & ~terminated
        failed = terminated.float()
        w = self.weights
        reward = (w["alive"] * (1 - failed) + w["terminating"] * failed + w["pole_pos"] * self.q[:, 1] ** 2
                  + w["cart_vel"] * self.v[:, 0].abs() + w["pole_vel"] * self.v[:, 1].abs()) * self.step_dt
        self._reset(terminated | truncated)
        return self.observations, reward, terminated, truncated, {"time_outs": truncated, "log": {}}


__all__ = ["TorchCartpole"]
