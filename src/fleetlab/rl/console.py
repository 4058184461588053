"""What a run prints: one progress line per iteration, the play result, and nothing twice when several ranks share
one console."""

from __future__ import annotations

import contextlib
import datetime
import io
import time

from fleetlab.distributed import RunContext


@contextlib.contextmanager
def printed_by_writer_only(ctx: RunContext):
    """Inside this block only global rank 0 prints to stdout: the libraries print their model summaries and set-up
    notes on every rank when they build the agent (rsl_rl's actor/critic, rl_games' "build mlp", seeds, ranks)."""
    if ctx.is_writer:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()):
        yield


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


def print_play_result(result: dict) -> None:
    line = (f"[fleetlab] play {result['task']}: mean return {result['mean_return']:.3f} over {result['episodes']} "
            f"episodes ({result['num_envs']} of them cut at step {result['steps']})")
    if "success_fraction" in result:
        line += f"; {result['success_name']} for {100 * result['success_fraction']:.1f}% of {result['steps']} steps"
    line += f"; {100 * result['terminated_fraction']:.1f}% of episodes begun ended by termination"
    for name, value in result.get("metrics", {}).items():
        line += f"; mean {name} {value:.3f}"
    print(line, flush=True)
