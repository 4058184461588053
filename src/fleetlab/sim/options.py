"""How MJX steps a task: the implementation and MuJoCo Warp's settings, as one typed config.

Every field is a task config field (`env.physics.<name>=<value>` on the command line) and a flag
(`--physics_<name> <value>`, which wins). The JAX implementation reads only `impl`."""

from __future__ import annotations

import dataclasses

from fleetlab.checks import one_of, optional, positive_int

IMPLS = ("auto", "jax", "warp")
# MuJoCo Warp's CUDA-graph modes (warp.JaxCallableGraphMode), and "auto": WARP_STAGED for a VecEnv on a GPU, MJX's
# default WARP inside Brax's fused XLA loop, MJX's default on the CPU (see sim/mjx.py for the measurements).
GRAPH_MODES = ("auto", "WARP", "WARP_STAGED", "WARP_STAGED_EX", "JAX", "NONE")


def _preload(value) -> str | None:
    ok = isinstance(value, str) and value
    return None if ok else "must be 'step', 'all', 'none' or module names, comma-separated"


@dataclasses.dataclass(frozen=True)
class PhysicsOptions:
    # auto: MuJoCo Warp on a CUDA device when warp-lang is installed, the JAX implementation otherwise
    impl: str = dataclasses.field(default="auto", metadata={"check": one_of(*IMPLS)})
    # MuJoCo Warp's buffers per env (None: 64 contacts and 512 constraint rows). A step that needs more stops
    # training with an error; oversized buffers cost time (Warp's solver runs over every row).
    contacts_per_env: int | None = dataclasses.field(default=None, metadata={"check": optional(positive_int)})
    constraints_per_env: int | None = dataclasses.field(default=None, metadata={"check": optional(positive_int)})
    graph_mode: str = dataclasses.field(default="auto", metadata={"check": one_of(*GRAPH_MODES)})
    # Warp modules compiled ahead on every core at start-up: "step" (the modules every step runs), "all", "none",
    # or module names, comma-separated
    preload: str = dataclasses.field(default="step", metadata={"check": _preload})
    # True: Warp computes the body forces (cfrc_int/ext) in every substep, not only in the last (for measurements)
    rne_every_substep: bool = dataclasses.field(default=False, metadata={"check": one_of(False, True)})
