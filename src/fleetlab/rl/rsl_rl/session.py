"""An rsl_rl training or playing session on a fleetlab VecEnv (what rl/workflow.py drives)."""

from __future__ import annotations

import os
import statistics

from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.library import Resume
from fleetlab.rl.rsl_rl.env import RslRlVecEnvWrapper
from fleetlab.rl.rsl_rl.runner import FleetOnPolicyRunner, as_obs_policy, quiet_onnx_export


class RslRlSession:
    def __init__(self, run, ctx, env, run_dir: str | None):
        self.ctx, self.env, self.play = ctx, env, run.play
        self.runner = FleetOnPolicyRunner(RslRlVecEnvWrapper(env), run.agent_cfg, log_dir=run_dir, ctx=ctx)
        self.runner.task_id = run.task.id
        self.iterations = run.agent_cfg["max_iterations"]

    def restore(self, resume: Resume) -> None:
        runner = self.runner
        runner.load_checkpoint(resume.checkpoint)
        if self.play:  # the weights are all it needs
            return
        if resume.auto:  # the saved iteration is complete: continue to the same final iteration
            runner.current_learning_iteration += 1
            self.iterations = max(self.iterations - runner.current_learning_iteration, 0)
            print(f"[fleetlab] auto-resume from {resume.path}: iterations {runner.current_learning_iteration} to "
                  f"{runner.cfg['max_iterations'] - 1}", flush=True)
        else:
            print(f"[fleetlab] resuming from {resume.path}", flush=True)
        ft.restore_rng(self.ctx, resume.checkpoint.get("fleetlab_rng"), self.env)

    def learn(self, stop) -> None:
        self.runner.stop = stop
        self.runner.learn(num_learning_iterations=self.iterations, init_at_random_ep_len=True)

    def policy(self):
        return as_obs_policy(self.runner.get_inference_policy(device=self.ctx.device), self.env)

    def training_policy(self):
        alg = self.runner.alg
        policy = as_obs_policy(alg.get_policy(), self.env)

        def act(obs):
            was_training = alg.actor.training  # eval mode stops the obs normalizer's updates: restore it
            alg.eval_mode()
            try:
                return policy(obs)
            finally:
                if was_training:
                    alg.train_mode()

        return act

    def checksum(self) -> str:
        return self.runner.checksum()

    def state_checksum(self) -> str:
        return self.runner.state_checksum()

    def mirror_scalars(self, wrap) -> None:
        # not called by the workflow: rsl_rl writes --logger wandb itself (RslRl.logs_to_wandb)
        self.runner.logger.writer = wrap(self.runner.logger.writer)

    def results(self) -> tuple[dict, dict]:
        logger = self.runner.logger
        steady = logger.local_fps[1:] or logger.local_fps  # iteration 1 carries the JIT compile
        figures = {"train_fps": statistics.median(steady) if steady else None}
        split = logger.split[1:] or logger.split
        if split:
            figures["rollout_s"] = statistics.median(c for c, _ in split)  # env steps + policy inference + storage
            figures["update_s"] = statistics.median(u for _, u in split)  # PPO epochs x minibatches
        return logger.last, figures

    def export(self, folder: str) -> list[str]:
        self.runner.export_policy_to_jit(folder, "policy.pt")
        with quiet_onnx_export():
            self.runner.export_policy_to_onnx(folder, "policy.onnx")
        return [os.path.join(folder, "policy.pt"), os.path.join(folder, "policy.onnx")]
