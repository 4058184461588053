"""Isaac Lab's train/play flags, shared by every library's scripts and by `fleetlab train|play`. Parsing only:
rl/run.py turns the parsed flags into the typed Run."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from fleetlab.errors import ArgumentParser, non_negative_int, positive_float, positive_int, seed_value
from fleetlab.rl.library import library as get_library
from fleetlab.sim.options import GRAPH_MODES, IMPLS, PhysicsOptions

PHYSICS_HELP = {  # --physics_<field>: each flag sets the task config's physics.<field> (sim/options.py)
    "impl": "MJX implementation (auto: MuJoCo Warp on a GPU when warp-lang is installed, else JAX)",
    "contacts_per_env": "MuJoCo Warp's contact buffer per env (default: the task's, else 64)",
    "constraints_per_env": "MuJoCo Warp's constraint rows per env (default: the task's, else 512)",
    "graph_mode": "MuJoCo Warp's CUDA-graph mode (auto: WARP_STAGED for a VecEnv on a GPU, WARP inside Brax's loop)",
    "preload": "Warp modules compiled ahead at start-up: step (default), all, none, or module names",
    "rne_every_substep": "MuJoCo Warp computes the body forces in every substep, not only the last (measurements)",
}


def add_physics_args(parser: argparse.ArgumentParser) -> None:
    """One --physics_<name> flag per PhysicsOptions field; unset flags keep the task config's value."""
    kinds = {"impl": {"choices": IMPLS}, "graph_mode": {"choices": GRAPH_MODES},
             "contacts_per_env": {"type": positive_int}, "constraints_per_env": {"type": positive_int},
             "preload": {"type": str}, "rne_every_substep": {"action": argparse.BooleanOptionalAction}}
    for field in dataclasses.fields(PhysicsOptions):
        parser.add_argument(f"--physics_{field.name}", default=None, help=PHYSICS_HELP[field.name], **kinds[field.name])


def physics_flags(args: argparse.Namespace) -> dict:
    """The --physics_* flags given: PhysicsOptions field -> value."""
    names = [f.name for f in dataclasses.fields(PhysicsOptions)]
    return {name: getattr(args, f"physics_{name}") for name in names if getattr(args, f"physics_{name}") is not None}


def add_args(parser: argparse.ArgumentParser, library: str, play: bool = False) -> argparse.ArgumentParser:
    p = parser
    p.add_argument("--task", type=str, default="Isaac-Cartpole-v0", help="task id (see `fleetlab list`)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: it registers the tasks of your own package (repeatable)")
    p.add_argument("--num_envs", type=positive_int, default=None,
                   help="envs PER PROCESS (N processes collect N x this)")
    p.add_argument("--seed", type=seed_value, default=None,
                   help="base seed (0..2^32-1); each rank adds its global rank")
    p.add_argument("--device", type=str, default=None, help="cpu | cuda | cuda:K (default: cuda:LOCAL_RANK if present)")
    p.add_argument("--distributed", action="store_true", default=False, help="train with several processes")
    p.add_argument("--headless", action="store_true", default=False, help="accepted for Isaac Lab compatibility")
    p.add_argument("--video", action="store_true", default=False,
                   help="train: record an mp4 every --video_interval env steps (rank 0, videos/train/); "
                        "play: record an mp4 of the trained policy")
    p.add_argument("--video_length", type=positive_int, default=200, help="steps in each video")
    if not play:
        p.add_argument("--video_interval", type=positive_int, default=2000,
                       help="env steps between training videos (Isaac Lab's default 2000)")
    add_physics_args(p)
    p.add_argument("--dist_timeout", type=positive_float, default=600.0, help="collective timeout in seconds")
    p.add_argument("--threads", type=non_negative_int, default=None,
                   help="torch's CPU threads in each process (default: 1 when training on the CPU, fastest on idle "
                        "and busy machines alike, see docs/performance.md; 0: torch's own default)")
    p.add_argument("--checkpoint", type=str, default=None,
                   help="checkpoint path, or a file name (a regex, as in Isaac Lab) searched in the latest run")
    p.add_argument("--resume", action="store_true", default=False,
                   help="train: continue from the latest run's latest checkpoint (with --load_run: that run's) for "
                        "--max_iterations MORE iterations")
    p.add_argument("--load_run", type=str, default=None, help="run-folder regex (default: the latest)")
    p.add_argument("--agent", type=str, default=None,
                   help=f"which of the task's {library} configs (default: {library}; `fleetlab list` shows the others; "
                        f"Isaac Lab's {library}_<name>_cfg_entry_point spelling works too)")
    lib = get_library(library)
    p.add_argument("--logger", type=str, default=None, choices=list(lib.loggers),
                   help="where training logs go (default tensorboard; wandb: global rank 0 only, TensorBoard files "
                        "are still written)")
    p.add_argument("--log_project_name", type=str, default=None,
                   help="the wandb/neptune project (default: the experiment name)")
    lib.add_args(p)
    if play:
        p.add_argument("--steps", type=positive_int, default=1000, help="steps to evaluate the policy for")
        p.add_argument("--export", action=argparse.BooleanOptionalAction, default=True,
                       help="export TorchScript and ONNX (--no-export: skip)")
    else:
        p.add_argument("--max_iterations", type=positive_int, default=None, help="training iterations (>= 1)")
        p.add_argument("--bench", action="store_true", default=False,
                       help="after training, also measure env-only and policy-inference FPS (for `fleetlab bench`)")
    return p


def parse(library: str, play: bool = False, argv: list[str] | None = None) -> argparse.Namespace:
    """Isaac Lab's flags, plus Hydra-style `agent.<path>=<value>` overrides of the agent config, as Isaac Lab's
    scripts accept (e.g. `agent.params.config.schedule_type=standard`)."""
    what = "Play" if play else "Train"
    script = os.path.basename(sys.argv[0])  # an Isaac Lab script path, or fleetlab's own entry point
    own = f"fleetlab {what.lower()} --library {library}"
    prog = script if script.endswith(".py") and script != "__main__.py" else own
    parser = ArgumentParser(prog=prog, description=f"{what} a fleetlab task with {library}.")
    add_args(parser, library, play)
    parser.add_argument("overrides", nargs="*",
                        help="agent.<key.path>=<yaml value> and env.<field.path>=<yaml value> overrides of the agent "
                             "and task configs (Isaac Lab's Hydra overrides)")
    args = parser.parse_intermixed_args(argv)  # overrides may sit between flags, as Hydra's do in Isaac Lab
    for item in args.overrides:
        if not item.startswith(("agent.", "env.")) or "=" not in item:
            parser.error(f"override '{item}' must look like agent.<key.path>=<value> or env.<field.path>=<value>")
    return args
