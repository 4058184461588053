"""A Brax PPO training or playing session on a fleetlab env (what rl/workflow.py drives).

Training is ONE call of Brax's `ppo.train`: rollout, GAE and update are one XLA program per epoch of
`log_interval` iterations, pmapped over every device of every process (one device per process: see
docs/distributed.md). We hook in only through its documented arguments: the env (`env.BraxEnv`, wrapped by
`env.VmapOnly`), `progress_fn` and `policy_params_fn` (on process 0, after each epoch: console, TensorBoard,
checkpoints, videos), and `restore_params` (resume)."""

from __future__ import annotations

import contextlib
import functools
import os
import statistics
import time

import jax
import numpy as np

from fleetlab.distributed import parameter_checksum, state_checksum
from fleetlab.envs import to_jax, to_torch
from fleetlab.errors import FleetlabError
from fleetlab.process import XLA, freeze_and_restart_collector, pause_collector
from fleetlab.rl import fault_tolerance as ft
from fleetlab.rl.brax import params as brax_params
from fleetlab.rl.brax.env import STAT_NAMES, BraxEnv, VmapOnly
from fleetlab.rl.console import Progress
from fleetlab.rl.library import STATE_CHECKSUM_KEY, Resume
from fleetlab.rl.perf import seconds_since_process_start
from fleetlab.rl.scalar_writer import ScalarWriter
from fleetlab.sim.mjx import warp_overflow_error


class BraxSession:
    def __init__(self, run, ctx, env, run_dir: str | None, resume: Resume | None):
        self.run, self.ctx, self.env, self.run_dir = run, ctx, env, run_dir
        self.cfg = cfg = run.agent_cfg
        self.brax_env = BraxEnv(env.core)
        self.num_envs_total = env.num_envs * ctx.world_size
        self.iteration_steps = self.num_envs_total * cfg["num_steps_per_env"]
        minibatches = cfg["ppo"]["num_minibatches"]
        if self.num_envs_total % minibatches:
            raise FleetlabError(f"brax needs the envs of all processes ({self.num_envs_total}) to be a multiple of "
                                f"agent.ppo.num_minibatches ({minibatches}): change --num_envs or the override")
        self.make_policy, self.params = brax_params.initial(self.brax_env, cfg, run.seed)
        self.start_iteration = 0
        self.resumed = False
        self.writer = None  # TensorBoard's (torch-free: rl/scalar_writer.py), made at the first epoch's end
        self.wrap_writer = None  # what mirror_scalars asks for, applied when the writer is made
        self.sps: list[float] = []  # Brax's training/sps, one per epoch (process 0 only)
        self.rollout_end_s: list[float] = []  # when each iteration's rollout statistics arrived (every process)
        self.compiles: list[int] = []  # XLA compilations in this process at each epoch's end
        # seconds since the process started: when learn() began and each epoch ended (where a run's time goes)
        self.learn_start_s: float | None = None
        self.epoch_end_s: list[float] = []
        self.last: dict = {}
        self.episode_rows: list[np.ndarray] = []
        self.last_rollout: np.ndarray | None = None  # the statistics of the latest rollout (one iteration)
        self.learn_s = None
        self.videos = None  # set by rl/workflow.py through step_hooks: see learn()
        self.collector_paused = False  # Python's garbage collector, off from learn() to the first rollout's end

    # -- Session --------------------------------------------------------------------------------------------------

    def restore(self, resume: Resume) -> None:
        self.params = brax_params.from_checkpoint(self.params, resume.checkpoint, resume.path)
        self.resumed = True
        if self.run.play:
            return
        done = int(resume.checkpoint["iteration"])
        self.start_iteration = done
        # A launcher restart continues to the same final iteration; an explicit --checkpoint trains
        # max_iterations MORE (Isaac Lab's rule, as for the other libraries).
        planned = self.cfg["max_iterations"]
        self.cfg["max_iterations"] = max(planned, done) if resume.auto else done + planned
        print(f"[fleetlab] resuming from {resume.path} at iteration {done}/{self.cfg['max_iterations']}: Brax's "
              "ppo.train restores the normalizer, policy and value (its Adam moments and adaptive learning rate "
              "start afresh)", flush=True)

    def learn(self, stop) -> None:
        """`stop` goes unused: Brax's ppo.train runs its epochs to the end (no hook between them can end it)."""
        cfg = self.cfg
        total = cfg["max_iterations"]
        remaining = total - self.start_iteration
        if remaining <= 0:
            print(f"[fleetlab] nothing to train: iteration {self.start_iteration} of {total} reached", flush=True)
            return
        # Brax's trainer is imported, and its epoch program traced, with the garbage collector off: both make
        # long-lived objects only (fleetlab/process.py). The first rollout's statistics turn it back on.
        pause_collector()
        self.collector_paused = True
        from brax.training.agents.ppo import train as ppo

        from fleetlab.rl.brax import patches

        per_epoch = epoch_length(remaining, cfg["log_interval"])
        self.epoch_iterations = per_epoch
        self.progress = Progress(total, self.start_iteration)
        # rl/workflow.py hangs videos on the VecEnv's steps; Brax never steps that env, so they are taken here,
        # between epochs
        self.videos = next((h for h in self.env.step_hooks if hasattr(h, "record")), None)
        ppo_cfg = dict(cfg["ppo"])
        wrap = functools.partial(VmapOnly, report_every=cfg["num_steps_per_env"], sink=self._episode_stats)
        self.learn_start_s = seconds_since_process_start()
        start = time.time()
        with patches.installed(), self._overflow_is_a_user_error():
            _, params, _ = ppo.train(
                environment=self.brax_env,
                num_timesteps=remaining * self.iteration_steps,
                num_envs=self.num_envs_total,
                batch_size=self.num_envs_total // ppo_cfg["num_minibatches"],
                unroll_length=cfg["num_steps_per_env"],
                episode_length=self.env.max_episode_length,  # unused by VmapOnly; Brax requires it
                wrap_env_fn=wrap,
                network_factory=brax_params.network_factory(cfg),
                num_evals=remaining // per_epoch + 1,
                run_evals=False,  # `fleetlab play` evaluates; Brax's eval env would be a second env to compile
                max_devices_per_host=1,
                # the base seed: Brax folds in the process index for the envs, and splits per device
                seed=self.run.seed + self.start_iteration,
                restore_params=self.params if self.resumed else None,
                progress_fn=self._progress,
                policy_params_fn=self._epoch_end,
                **ppo_cfg,
            )
        self.learn_s = time.time() - start
        self.params = params
        if self.writer is not None:
            self.writer.flush()

    @contextlib.contextmanager
    def _overflow_is_a_user_error(self):
        """An exception in the stats callback reaches us as JAX's runtime error around it; an overflow is the
        user's buffer sizes, so it becomes their one-line error."""
        self.overflowed = False
        try:
            yield
        except Exception:
            if self.overflowed:
                raise warp_overflow_error("during the rollout") from None
            raise

    def policy(self):
        act = jax.jit(self.make_policy(self.params, deterministic=True))
        key = jax.random.PRNGKey(0)  # unused by the deterministic policy

        def policy(obs: "torch.Tensor") -> "torch.Tensor":  # noqa: F821  (torch is never imported here)
            return to_torch(act(to_jax(obs), key)[0])

        return policy

    def training_policy(self):
        return self.policy()  # pure: the Brax policy keeps no state, and videos are taken between epochs

    def checksum(self) -> str:
        return parameter_checksum([np.asarray(x) for x in jax.tree.leaves(self.params)])

    def state_checksum(self) -> str:
        # Brax's ppo.train takes only restore_params (normalizer, policy, value): its optimizer state is not
        # restorable, so the params are the whole restorable state.
        return state_checksum([np.asarray(x) for x in jax.tree.leaves(self.params)])

    def results(self) -> tuple[dict, dict]:
        # the first epoch includes the XLA compile
        steady = self.sps[1:] if self.sps else self._steady_sps_from_rollouts()
        if steady:
            per_process = statistics.median(steady) / self.ctx.world_size
        else:  # one epoch: the whole of learn(), compile included
            per_process = self._fps_with_jit() / self.ctx.world_size if self.learn_s else None
        last = {**self.last, "iterations": self.cfg["max_iterations"], "epoch_sps": self.sps,
                "jax_backend_compiles": XLA.count,
                # flat after the first epoch: every later epoch reuses the one compiled program
                "compiles_after_first_epoch": self.compiles[-1] - self.compiles[0] if self.compiles else None,
                "xla_compile_s": XLA.compile_s, "jax_trace_s": XLA.trace_s, "learn_start_s": self.learn_start_s,
                "epoch_end_s": self.epoch_end_s}
        if self.last_rollout is not None and self.last_rollout[0] > 0:
            # the episodes that ended in the final iteration alone: the window closest to rsl_rl's Train/mean_reward
            # (its last 100 episodes), where the per-epoch figure above averages `log_interval` iterations of a
            # rising curve
            n = self.last_rollout[0]
            last["Train/mean_reward_last_iteration"] = float(self.last_rollout[1] / n)
            last["Train/mean_episode_length_last_iteration"] = float(self.last_rollout[2] / n)
        if self.learn_s:
            last["fps_with_jit"] = self._fps_with_jit()
        return last, {"train_fps": per_process}

    def _fps_with_jit(self) -> float:
        return (self.cfg["max_iterations"] - self.start_iteration) * self.iteration_steps / self.learn_s

    def _steady_sps_from_rollouts(self) -> list[float]:
        """All processes' steps/s in each epoch after the first, from this process's clock. Brax's ppo.train calls
        progress_fn on process 0 only (`if process_id != 0: continue`), so the other processes never see its
        training/sps: their summary rows had no training FPS, and a multi-process run's summed FPS was empty.
        An epoch is timed from the previous epoch's last rollout to its own: Brax's epoch shifted by one update."""
        if not self.rollout_end_s:
            return []
        ends = self.rollout_end_s[self.epoch_iterations - 1::self.epoch_iterations]
        steps = self.epoch_iterations * self.iteration_steps
        return [steps / (b - a) for a, b in zip(ends, ends[1:])]

    def export(self, folder: str) -> list[str]:
        from fleetlab.rl.brax.export import export_policy

        return export_policy(self.params, self.cfg, self.brax_env.observation_size, folder)

    def mirror_scalars(self, wrap) -> None:
        self.wrap_writer = wrap

    def _tensorboard(self):
        """Process 0's TensorBoard writer, made at its first use."""
        if self.writer is None and self.ctx.is_writer and self.run_dir is not None:
            self.writer = ScalarWriter(self.run_dir, flush_secs=10)
            if self.wrap_writer is not None:
                self.writer = self.wrap_writer(self.writer)
        return self.writer

    # -- Brax's callbacks (process 0) and the env's statistics (every process) ------------------------------------

    def _episode_stats(self, totals) -> None:
        if self.collector_paused:  # the compiled epoch program runs: what its trace made is long-lived
            self.collector_paused = False
            freeze_and_restart_collector()
        self.rollout_end_s.append(time.time())
        self.last_rollout = np.asarray(totals)
        self.episode_rows.append(self.last_rollout)
        if totals[5] > 0:  # summed over every process: each one stops its rollout here (see train)
            self.overflowed = True
            raise RuntimeError("MuJoCo Warp buffer overflow")

    def _iteration(self, step: int) -> int:
        return self.start_iteration + int(step) // self.iteration_steps

    def _progress(self, step: int, metrics: dict) -> None:
        it = self._iteration(step)
        sps = float(metrics["training/sps"])
        self.epoch_end_s.append(seconds_since_process_start())
        self.sps.append(sps)
        self.compiles.append(XLA.count)
        rows = np.sum(self.episode_rows, axis=0) if self.episode_rows else None
        self.episode_rows.clear()
        scalars = {f"Loss/{k.removeprefix('training/')}": float(v) for k, v in metrics.items()
                   if k.startswith("training/") and k not in ("training/sps", "training/walltime")}
        scalars["Perf/total_fps"] = sps
        scalars["Perf/xla_compiles"] = XLA.count
        if rows is not None and rows[0] > 0:
            n = rows[0]
            scalars["Train/mean_reward"] = rows[1] / n
            scalars["Train/mean_episode_length"] = rows[2] / n
            rewards = rows[len(STAT_NAMES):len(STAT_NAMES) + len(self.brax_env.reward_names)]
            for name, value in zip(self.brax_env.reward_names, rewards):
                scalars[f"Episode_Reward/{name}"] = value / n / self.env.cfg.episode_length_s
            terminations = rows[len(STAT_NAMES) + len(self.brax_env.reward_names):]
            for name, value in zip(self.brax_env.termination_names, terminations):
                scalars[f"Episode_Termination/{name}"] = value
        self.last = {k: float(v) for k, v in scalars.items()}
        if (writer := self._tensorboard()) is not None:
            for name, value in scalars.items():
                writer.add_scalar(name, value, it)
        print(self.progress.line(it - 1, sps, ret=scalars.get("Train/mean_reward"),
                                 len=scalars.get("Train/mean_episode_length")), flush=True)

    def _epoch_end(self, step: int, make_policy, params) -> None:
        it = self._iteration(step)
        self.params = params
        if self.videos is not None:  # at env steps 0, N, 2N, ...: the first epoch end at or after each
            env_steps = (it - self.start_iteration) * self.cfg["num_steps_per_env"]
            interval = self.videos.interval
            if it == self.start_iteration or env_steps // interval > self.videos.steps // interval:
                self.videos.record(env_steps)
            self.videos.steps = env_steps
        if self.run_dir is None or it == self.start_iteration:
            return
        interval = self.cfg["save_interval"]
        crossed = it // interval > (it - self.epoch_iterations) // interval
        if crossed or it == self.cfg["max_iterations"]:
            self.save(os.path.join(self.run_dir, f"model_{it}{brax_params.CHECKPOINT_SUFFIX}"), it, step)

    def save(self, path: str, iteration: int, step: int) -> None:
        checkpoint = brax_params.to_checkpoint(self.params, self.cfg, iteration, self.run.task.id,
                                               self.start_iteration * self.iteration_steps + int(step))
        checkpoint[STATE_CHECKSUM_KEY] = self.state_checksum()
        ft.atomic_pickle_save(checkpoint, path)


def epoch_length(iterations: int, at_most: int) -> int:
    """The largest divisor of `iterations` that is at most `at_most`: Brax runs whole epochs of equal length."""
    return max(d for d in range(1, max(1, min(iterations, at_most)) + 1) if iterations % d == 0)
