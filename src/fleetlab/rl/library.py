"""The interface an RL library adapter implements, and the one registry of libraries.

rl/workflow.py runs every library through the same steps (run context -> task -> agent config -> env -> adapter ->
learn or evaluate -> summary) and calls only what is declared here; rl/run_dir.py finds, reads and resumes every
library's checkpoints from its declared CheckpointLayout. Adding a library = one package under rl/ that exposes
`LIBRARY` (an object with the `Library` members) plus one line in `LIBRARIES`: docs/adding_a_library.md.

A library package must not import its RL library at module level: `fleetlab train --library X` parses flags and
names run directories without the other libraries installed (each is an optional extra), and skrl even starts
torch.distributed when it is imported. The upstream library is imported inside `session()`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
from typing import TYPE_CHECKING, Callable, ContextManager, Protocol

from fleetlab.errors import FleetlabError

if TYPE_CHECKING:
    import torch

    from fleetlab.distributed import RunContext
    from fleetlab.envs import VecEnv
    from fleetlab.process import StopRequest

# --library value -> the module that exposes LIBRARY. The CLI, `fleetlab launch`, `fleetlab bench train`, the flags and
# the Isaac Lab scripts all read this.
LIBRARIES = {
    "rsl_rl": "fleetlab.rl.rsl_rl",
    "rl_games": "fleetlab.rl.rl_games",
    "skrl": "fleetlab.rl.skrl",
    "brax": "fleetlab.rl.brax",
}


@dataclasses.dataclass(frozen=True)
class CheckpointLayout:
    """Where a library's checkpoints lie in a run directory, and how fleetlab recognizes one. rl/run_dir.py reads
    it to find the checkpoint to play or resume, the latest complete one after a restart and the run a checkpoint
    belongs to; rl/checkpoint_reader.py to tell which library wrote a file."""

    folder: str  # inside the run directory ("": the run directory itself)
    file: str  # regex of a checkpoint's file name; its first group, if any, is the checkpoint's step
    keys: frozenset  # keys of the saved dict that identify this library's format
    runs: str = ".*"  # regex of the run folders that hold this kind of run ("{framework}": torch or jax)
    play_file: str | None = None  # the checkpoint play prefers when none is named (skrl: its best agent)
    # When a checkpoint is complete. None: as soon as it exists (written atomically). Else a side file, named with
    # the checkpoint's step ("{step}"), written after it; resuming reads it as Resume.state.
    completed_by: str | None = None


@dataclasses.dataclass(frozen=True)
class SeedPolicy:
    """Where a library takes its seed in the agent config, and which seed: with `adds_rank` the library adds the
    global rank itself (so it gets the base seed), else it gets this rank's seed (base + global rank)."""

    key: str  # dotted path in the agent config
    adds_rank: bool

    def apply(self, cfg: dict, base_seed: int, rank_seed: int) -> None:
        *parents, last = self.key.split(".")
        for name in parents:
            cfg = cfg[name]
        cfg[last] = base_seed if self.adds_rank else rank_seed


@dataclasses.dataclass
class Resume:
    """A checkpoint to start from, read once (fleetlab.rl.checkpoint_reader) before the library is built.
    `auto`: a restart under `fleetlab launch`, which continues to the same final iteration (an explicit --checkpoint
    trains max_iterations MORE, as Isaac Lab does); `state`: fleetlab's side file (skrl: timestep and RNG states)."""

    path: str
    checkpoint: dict
    auto: bool = False
    state: dict | None = None

    @property
    def saved_state_checksum(self) -> str | None:
        """The hash of the training state the checkpoint holds, recorded when it was written (Session.state_checksum);
        None for a checkpoint written before fleetlab recorded it."""
        for source in (self.state, self.checkpoint):
            if isinstance(source, dict) and STATE_CHECKSUM_KEY in source:
                return source[STATE_CHECKSUM_KEY]
        return None


STATE_CHECKSUM_KEY = "fleetlab_state_checksum"  # in a checkpoint (skrl: in its fleetlab_<t>.pt side file)


class Session(Protocol):
    """One library's runner (or agent, or player) built on one VecEnv, for training or for playing."""

    def restore(self, resume: Resume) -> None:
        """Training: weights, optimizer, normalizers, counters and this rank's RNG state. Playing: the weights."""

    def learn(self, stop: StopRequest) -> None:
        """Train to the configured end; a stop asked for by SIGINT/SIGTERM (stop.agreed() at iteration boundaries)
        ends it early with fault_tolerance.GracefulStop."""

    def policy(self) -> Callable[[torch.Tensor], torch.Tensor]:
        """Deterministic actions from policy observations (torch in, torch out, on the env's device)."""

    def checksum(self) -> str:
        """Hash of every trained parameter and normalizer statistic: equal on every rank iff they are in sync."""

    def state_checksum(self) -> str:
        """Hash of everything restore() brings back for training (weights, normalizers, optimizer state, counters),
        computed the same way when a checkpoint is written (stored in it under STATE_CHECKSUM_KEY): equal right
        after a restore iff the restore brought back all of it."""

    def results(self) -> tuple[dict, dict]:
        """(the last logged metrics, this rank's figures: at least "train_fps", the steady-state training FPS)."""

    def export(self, folder: str) -> list[str]:
        """Write deployable copies of the policy (TorchScript, ONNX) into `folder`; [] where unsupported."""

    def training_policy(self) -> Callable[[torch.Tensor], torch.Tensor]:
        """Like policy(), callable in the middle of training (videos during training): each call leaves the
        library as it was (training modes, normalizers, RNG streams, per-call state), so training is unchanged."""

    def mirror_scalars(self, wrap: Callable[[object], object]) -> None:
        """Replace the library's TensorBoard writer (rank 0) with wrap(writer); only for `logs_to_wandb = False`."""


class Library(Protocol):
    """What a library adapter declares and does. `run` is rl/run.py's Run (not imported here: rl/run.py imports
    this module)."""

    name: str  # the --library value and the logs/<name>/ folder
    checkpoint: CheckpointLayout
    seed: SeedPolicy  # set by rl/workflow.py before finalize()
    variants: dict[str, list[str]]  # `fleetlab bench train` labels -> the train flags that select them
    loggers: tuple[str, ...]  # --logger choices (the default is tensorboard)
    logs_to_wandb: bool  # True: the library writes --logger wandb itself; False: rl/tracking.py mirrors TensorBoard
    checks: dict[str, Callable]  # agent-config key path -> rule (fleetlab.checks), applied after overrides and flags
    requires: tuple[str, str]  # (the module it imports, the pip extra that installs it)

    def add_args(self, parser: argparse.ArgumentParser) -> None:
        """This library's own flags (rsl_rl: --experiment_name ...; skrl: --ml_framework)."""

    def framework(self, options: dict) -> str:
        """"torch" (torchrun) or "jax" (jax.distributed and the JAX launcher), from the library's own flags."""

    def label(self, options: dict) -> str:
        """The name in console lines and summary.json: "rsl_rl", "skrl-jax"."""

    def configure(self, run) -> None:
        """Apply the run's flags to run.agent_cfg (after the agent.x=y overrides: the flags win)."""

    def run_dir_parts(self, run) -> tuple[str, str]:
        """(experiment, run name) of a training run's directory: logs/<name>/<experiment>/<time>[_<run name>]."""

    def finalize(self, run, ctx: RunContext, env: VecEnv, run_dir: str | None) -> None:
        """Fill in what only the started run knows (device, env size, run directory)."""

    def session(self, run, ctx: RunContext, env: VecEnv, run_dir: str | None,
                resume: Resume | None) -> ContextManager[Session]:
        """Build the library's runner; the library's upstream fixes are installed only while this block runs."""


def apply_run_name_flags(run) -> None:
    """--experiment_name, --run_name and --max_iterations into an rsl_rl-style agent config (rsl_rl's, brax's)."""
    cfg, options = run.agent_cfg, run.options
    if options["experiment_name"]:
        cfg["experiment_name"] = options["experiment_name"]
    if options["run_name"]:
        cfg["run_name"] = options["run_name"]
    if not run.play and run.max_iterations is not None:
        cfg["max_iterations"] = run.max_iterations


def variants() -> dict[str, tuple[str, list[str]]]:
    """Every library configuration `fleetlab bench train` knows: label -> (library name, train flags)."""
    return {label: (name, flags) for name in LIBRARIES for label, flags in library(name).variants.items()}


def library(name: str) -> Library:
    if name not in LIBRARIES:
        raise FleetlabError(f"unknown library '{name}': use one of {', '.join(LIBRARIES)}")
    return importlib.import_module(LIBRARIES[name]).LIBRARY


def check_installed(lib: Library) -> None:
    """A library that is not installed is a one-line error naming the extra that installs it (found without
    importing it: skrl starts torch.distributed when imported)."""
    module, extra = lib.requires
    if importlib.util.find_spec(module) is None:
        raise FleetlabError(f"--library {lib.name} needs {module}, which is not installed: "
                            f"pip install 'fleetlab[{extra}]' (from a checkout: pip install -e '.[{extra}]')")
