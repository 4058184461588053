"""`fleetlab list | train | play | launch | bench env | bench train`."""

from __future__ import annotations

import os
import sys

from fleetlab.errors import ArgumentParser, FleetlabError, positive_int
from fleetlab.process import exit_process
from fleetlab.rl.library import LIBRARIES
from fleetlab.sim.options import IMPLS


def _list(argv: list[str]) -> int:
    from fleetlab.envs import Env
    from fleetlab.envs.registry import agent_libraries, list_tasks, resolve, task_cfg
    from fleetlab.rl.run import load_tasks
    from fleetlab.sim.mjx import IMPLS

    parser = ArgumentParser(prog="fleetlab list", description="The registered tasks.")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first: it registers the tasks of your own package (repeatable)")
    load_tasks(parser.parse_args(argv).imports)
    impls = ", ".join(i for i in IMPLS if i != "auto")  # every task is MJCF stepped by MJX: both implementations
    for task_id in list_tasks():
        entry = resolve(task_id)
        env = Env(task_cfg(entry), entry.id)  # the sizes follow from the terms and the MJCF
        aliases = f" (alias: {', '.join(entry.aliases)})" if entry.aliases else ""
        libraries = agent_libraries(entry)
        others = [key for key in entry.agents if key not in libraries]
        print(f"{task_id}{aliases}\n    {entry.description}\n"
              f"    observations {env.num_obs}, actions {env.num_actions}; physics: {impls}\n"
              f"    libraries: {', '.join(libraries) or 'none'}"
              + (f"; other agent configs (--agent): {', '.join(others)}" if others else "")
              + (f"\n    plays the checkpoints of {entry.plays}" if entry.plays else ""))
    return 0


def run_workflow(library: str, play: bool, argv: list[str]) -> int:
    """Parse Isaac Lab's flags for `library` and run the train or play workflow, in a process set up by
    fleetlab/process.py (before the imports below) and put back as it was after."""
    from fleetlab.process import ProcessSetup

    with ProcessSetup() as process:
        return _run_workflow(process, library, play, argv)


def _run_workflow(process, library: str, play: bool, argv: list[str]) -> int:
    from fleetlab.rl import args as rl_args
    from fleetlab.rl import workflow
    from fleetlab.rl.fault_tolerance import GracefulStop
    from fleetlab.rl.run import resolve_run
    from fleetlab.rl.run_dir import file_system_error

    args = rl_args.parse(library, play=play, argv=argv)
    try:
        run = resolve_run(library, args, play)
        process.configure_process(run)
        try:
            workflow.play(run) if play else workflow.train(run, process)
        except OSError as err:  # a full disk, a read-only folder: one line saying what to do (others re-raise)
            raise file_system_error(err, "a file could not be written") from None
    except GracefulStop as stop:
        print(f"[fleetlab] {stop}", flush=True)
        return stop.exit_code
    except BaseException as err:
        jax_dist = sys.modules.get("fleetlab.distributed.jax_dist")
        if jax_dist is not None and jax_dist.is_running():
            # A failing jax.distributed process hangs at exit: shutdown() waits at a barrier for the other
            # processes, and so does the runtime's own teardown. Report, then leave at once.
            if isinstance(err, FleetlabError):
                print_error(err)
            else:
                import traceback

                traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(2 if isinstance(err, FleetlabError) else 1)
        raise
    return 0


def _train_or_play(argv: list[str], play: bool) -> int:
    lib_parser = ArgumentParser(add_help=False)
    lib_parser.add_argument("--library", choices=list(LIBRARIES), default="rsl_rl")
    known, rest = lib_parser.parse_known_args(argv)
    return run_workflow(known.library, play, rest)


def script_main(library: str, play: bool) -> None:
    """Entry point of scripts/reinforcement_learning/<library>/{train,play}.py: one-line errors, non-zero exit."""
    try:
        code = run_workflow(library, play, sys.argv[1:])
    except FleetlabError as err:
        print_error(err)
        code = 2
    exit_process(code)


def print_error(err: FleetlabError) -> None:
    """A user's mistake: one line, no traceback (anything else is a bug and keeps its traceback)."""
    print(f"fleetlab: error: {err}", file=sys.stderr, flush=True)


def _bench(argv: list[str]) -> int:
    parser = ArgumentParser(prog="fleetlab bench")
    sub = parser.add_subparsers(dest="what", required=True)
    env = sub.add_parser("env", help="env-only steps/s with random actions")
    env.add_argument("--task", default="Isaac-Cartpole-v0")
    env.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                     help="import MODULE first: it registers the tasks of your own package")
    env.add_argument("--num_envs", type=positive_int, nargs="+", default=[4096])
    env.add_argument("--device", default="cpu")
    env.add_argument("--steps", type=positive_int, default=200)
    env.add_argument("--repeats", type=positive_int, default=5)
    from fleetlab.rl.args import add_physics_args

    add_physics_args(env)
    env.add_argument("--view", default="torch", choices=["torch", "jax"])
    env.add_argument("--json", default=None, help="also write the results to this file")
    env.add_argument("--breakdown", action="store_true", help="also split a step's time: scan floor, jit, torch view")
    train = sub.add_parser("train", help="env / inference / training FPS per library, envs and processes")
    train.add_argument("--task", default="Isaac-Cartpole-v0")
    train.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                       help="import MODULE first (in every run): it registers the tasks of your own package")
    from fleetlab.rl.library import variants

    train.add_argument("--libraries", nargs="+", default=list(variants()), help="library variants to measure")
    train.add_argument("--num_envs", type=positive_int, nargs="+", default=[4096])
    train.add_argument("--nproc", type=positive_int, nargs="+", default=[1], help="process counts (one GPU each)")
    train.add_argument("--iterations", type=positive_int, default=30)
    train.add_argument("--device", default=None, help="cuda | cpu (default: cuda where a GPU is visible, else cpu)")
    train.add_argument("--no_baseline", action="store_true",
                       help="skip the pure-torch cartpole baseline (run only for the Cartpole task)")
    train.add_argument("--physics_impl", nargs="+", default=["auto"], choices=IMPLS,
                       help="physics implementations to measure, each in its own runs")
    train.add_argument("--out", default="benchmarks/results/latest")
    args = parser.parse_args(argv)
    from fleetlab.rl.run_dir import check_writable

    # where the results go is checked first: a measurement of minutes must not end in an OS traceback
    if args.what == "train":
        check_writable(args.out, f"cannot write the results to --out '{args.out}'")
        if args.device is None:
            from fleetlab.distributed.context import _cuda_device_count

            args.device = "cuda" if _cuda_device_count("jax") else "cpu"
        elif args.device.startswith("cuda"):
            from fleetlab.distributed.context import _cuda_device_count

            if not _cuda_device_count("jax"):
                raise FleetlabError(f"--device {args.device}: no GPU is visible here (use --device cpu)")
    elif args.json:
        check_writable(os.path.dirname(os.path.abspath(args.json)), f"cannot write --json '{args.json}'")
    if args.what == "train":
        from fleetlab.bench.train import bench_train

        rows = bench_train(args.libraries, args.task, args.num_envs, args.nproc, args.iterations, args.device,
                           args.out, baseline=not args.no_baseline, imports=args.imports,
                           impls=args.physics_impl)
        from fleetlab.bench.train import markdown

        print(markdown(rows))
        return 0 if not any(r.get("rc") for r in rows) else 1
    from fleetlab.process import ProcessSetup

    with ProcessSetup():  # JAX's compilation cache and no GPU preallocation, before JAX is imported
        return _bench_env(args)


def _bench_env(args) -> int:
    from fleetlab.bench.env import bench_env, breakdown
    from fleetlab.rl.args import physics_flags
    from fleetlab.rl.run import load_tasks

    load_tasks(args.imports)

    results = []
    for n in args.num_envs:
        r = bench_env(args.task, n, device=args.device, steps=args.steps, repeats=args.repeats,
                      physics=physics_flags(args), view=args.view)
        if args.breakdown:
            r["breakdown"] = breakdown(args.task, n, device=args.device, steps=args.steps, repeats=args.repeats)
            print("  breakdown (ms/step): " + ", ".join(f"{k[:-3]} {v:.3f}" for k, v in r["breakdown"].items()
                                                     if k.endswith("_ms")), flush=True)
        results.append(r)
        print(f"{r['task']} {n:>7} envs on {r['device']} ({r['view']} view): "
              f"{r['env_steps_per_s_median']:,.0f} env-steps/s (median of {r['repeats']}), "
              f"{r['ms_per_call_median']:.3f} ms/step; compile {r['compile_s']:.2f}s", flush=True)
    if args.json:
        from fleetlab.rl.run_dir import write_json

        write_json(args.json, {"results": results})
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = ("usage: fleetlab {list,train,play,launch,bench} ...  "
             "(fleetlab train --library rsl_rl --task Isaac-Cartpole-v0; "
             "fleetlab launch --nproc_per_node 2 -- train ...)")
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "list":
            return _list(rest)
        if command in ("train", "play"):
            return _train_or_play(rest, play=command == "play")
        if command == "launch":
            from fleetlab.launch import main as launch_main

            return launch_main(rest)
        if command == "bench":
            return _bench(rest)
    except FleetlabError as err:
        print_error(err)
        return 2
    print_error(FleetlabError(f"unknown command '{command}': use one of list, train, play, launch, bench"))
    return 2


if __name__ == "__main__":
    exit_process(main())
