"""The end of a training run on every rank: checksums and seeds gathered, summary.json written by rank 0."""

from __future__ import annotations

import os

from fleetlab.distributed import RunContext
from fleetlab.rl.perf import aggregate
from fleetlab.rl.run_dir import write_json


def finish(ctx: RunContext, run_dir: str, library: str, task_id: str, env, checksum: str, last: dict, wall_s: float,
           perf: dict | None = None, state_checksum: str | None = None, initial_env: str | None = None,
           resumed: dict | None = None) -> dict:
    """End of training on every rank: print this rank's parameter checksum and seed, gather them on rank 0, and
    write summary.json (the checksums must be identical across ranks; the seeds, and so the initial env states,
    must differ). `state_checksum`: the whole training state at the end (what the last checkpoint holds);
    `resumed`: the checkpoint this run started from, with the state it saved and the state restored."""
    mine = {"rank": ctx.rank, "local_rank": ctx.local_rank, "node_rank": ctx.node_rank, "pid": os.getpid(),
            "seed": ctx.seed, "device": ctx.device, "checksum": checksum, "state_checksum": state_checksum,
            "initial_env_checksum": initial_env, "resumed": resumed, "perf": perf or {}}
    print(f"[fleetlab] rank {ctx.rank}: seed {ctx.seed}, parameter checksum {checksum}", flush=True)
    ranks = ctx.all_gather_object(mine)
    summary = {
        "task": task_id,
        "library": library,
        "world_size": ctx.world_size,
        "physics_impl": env.core.physics.impl,
        "num_envs_per_process": env.num_envs,
        "num_envs_total": env.num_envs * ctx.world_size,
        "wall_s": wall_s,
        "final": last,
        "ranks": ranks,
        "checksums_identical": len({r["checksum"] for r in ranks}) == 1,
        "state_checksum": state_checksum,
        "initial_env_states_distinct": len({r["initial_env_checksum"] for r in ranks}) == len(ranks),
        "resumed": resumed,
        "perf": aggregate([r["perf"] for r in ranks]),
    }
    if ctx.is_writer:
        write_json(os.path.join(run_dir, "summary.json"), summary)
        print(f"[fleetlab] done in {wall_s:.1f}s; checksums identical across ranks: {summary['checksums_identical']}; "
              f"summary: {os.path.join(run_dir, 'summary.json')}", flush=True)
    return summary
