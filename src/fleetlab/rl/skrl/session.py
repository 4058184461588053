"""An skrl training or playing session on a fleetlab VecEnv (what rl/workflow.py drives)."""

from __future__ import annotations

import time

from fleetlab.process import XLA
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import Resume
from fleetlab.rl.skrl.agent import TrainingState

SAMPLE_COUNTERS = ("_g_i", "_c_i", "_mc_i")  # skrl-JAX's Gaussian/Categorical/MultiCategorical call counters


class SkrlSession:
    def __init__(self, backend, run, ctx, env, resume: Resume | None):
        self.backend, self.run, self.ctx, self.env = backend, run, ctx, env
        cfg = run.agent_cfg
        # A launcher restart continues from the saved timestep: the trainer runs the rest, the agent sees the
        # shifted timesteps (agent.TrainingState.offset).
        # An explicit --resume / --checkpoint trains `timesteps` MORE (Isaac Lab's rule, as for the other libraries).
        total = cfg["trainer"]["timesteps"]
        saved = resume.state["timestep"] if resume and resume.state else 0
        if resume and not resume.auto:
            total += saved
        self.offset = min(saved, total)
        cfg["trainer"]["timesteps"] = total - self.offset
        self.runner, self.wrapped = backend.build_runner(env, cfg)
        self.agent = self.runner.agent
        if not run.play:
            if hasattr(self.wrapped, "drain_log"):
                self.wrapped.log_rows = []
            self.agent.fleet = TrainingState(
                ctx=ctx, env=env, task_id=run.task.id, offset=self.offset, total=total,
                rollouts=cfg["agent"]["rollouts"], interval=cfg["agent"]["experiment"]["checkpoint_interval"],
                rng_extra=backend.rng_extra, state_checksum=self.state_checksum,
                env_log=getattr(self.wrapped, "drain_log", None),
            )
            # every rank tracks episodes at rank 0's write interval (upstream zeroes it on the others)
            self.agent.write_interval = ctx.broadcast_object(self.agent.write_interval)
        self.steps = cfg["trainer"]["timesteps"] * env.num_envs * ctx.world_size
        self.learn_s = None

    def restore(self, resume: Resume) -> None:
        self.backend.load_agent(self.agent, resume.checkpoint)  # models, optimizer, normalizers
        if self.run.play:
            return
        if resume.state and ft.restore_rng(self.ctx, resume.state["rng"], self.env):
            self.backend.set_rng_extra(resume.state["rng"][self.ctx.rank])
        print(f"[fleetlab] resuming from {resume.path} at timestep {self.offset}/{self.agent.fleet.total}", flush=True)

    def learn(self, stop) -> None:
        self.agent.fleet.stop = stop
        start = time.time()
        self.runner.run("train")
        self.learn_s = time.time() - start

    def policy(self):
        return self.backend.policy_fn(self.agent)

    def training_policy(self):
        agent = self.agent

        def act(obs):
            # policy() switches the agent and its models to evaluation mode: put back each one's own mode
            # and what each act() call changes for the training's next steps: skrl's PPO.act() keeps its
            # log-prob in _current_log_prob for the record_transition after the env step (this runs inside that
            # env step), skrl-JAX's models count their calls to derive sampling keys (_g_i, _c_i, _mc_i).
            models = [m for m in agent.models.values() if m is not None]
            agent_mode, model_modes = agent.training, [m.training for m in models]
            rng = self.backend.rng_extra()
            current = {k: v for k, v in vars(agent).items() if k.startswith("_current")}
            counters = [{k: v for k, v in vars(m).items() if k in SAMPLE_COUNTERS} for m in models]
            try:
                return self.policy()(obs)
            finally:
                agent.training = agent_mode
                for model, mode, count in zip(models, model_modes, counters):
                    model.enable_training_mode(mode)
                    vars(model).update(count)
                self.backend.set_rng_extra(rng)
                vars(agent).update(current)

        return act

    def checksum(self) -> str:
        return self.backend.checksum(self.agent)

    def state_checksum(self) -> str:
        return self.backend.state_checksum(self.agent)

    def results(self) -> tuple[dict, dict]:
        last = {"env_steps_total": self.steps, "fps_with_jit": self.steps / self.learn_s}
        if self.run.framework == "jax":
            last["jax_backend_compiles"] = XLA.count
        return last, {"train_fps": self.wrapped.steady_fps(self.run.agent_cfg["agent"]["rollouts"])}

    def export(self, folder: str) -> list[str]:
        return []

    def mirror_scalars(self, wrap) -> None:
        self.agent.writer = wrap(self.agent.writer)
