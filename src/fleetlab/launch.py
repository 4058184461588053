"""`fleetlab launch`: start a training run on every GPU of one or more nodes, restart it on failure, resume it.

    fleetlab launch --nproc_per_node N [--nnodes A[:B] --node_rank R --rdzv_endpoint H:P --rdzv_id ID]
                    [--max_restarts K] -- train --library rsl_rl --task Isaac-Cartpole-v0 ...

- rsl_rl, rl_games and skrl-torch run under torch.distributed.run's own elastic agent (what torchrun is): it
  rendezvous the nodes (c10d), watches the workers, restarts the group up to K times and forwards SIGINT/SIGTERM.
- skrl with --ml_framework jax runs under skrl's JAX launcher (through fleetlab.distributed.jax_launch, which keeps
  exit codes and stops the other processes when one fails); K restarts relaunch that launcher.
- The launcher picks the run directory once and hands it to every worker (FLEETLAB_RUN_DIR), so a restarted group
  trains in the same directory and resumes from its latest complete checkpoint. Multi-node runs name it after
  --rdzv_id (the same on every node).
- Rank 0 prints to the console; every other rank writes <run dir>/logs/rank_<R>.log.
- The exit code is the failing rank's (128 + N for a rank killed by signal N).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys

from fleetlab.distributed.context import RUN_DIR_VAR
from fleetlab.distributed.process_tree import become_subreaper, end_descendants
from fleetlab.errors import ArgumentParser, FleetlabError, port_number
from fleetlab.rl.library import LIBRARIES


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="fleetlab launch", description=__doc__.split("\n\n")[0],
                                usage="fleetlab launch [options] -- train <train args> | -- <script.py> <args>")
    p.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1, help="processes (GPUs) on this node")
    p.add_argument("--nnodes", default="1", help="number of nodes, or MIN:MAX for an elastic run")
    p.add_argument("--node_rank", "--node-rank", type=int, default=None, help="this node's index (static rendezvous)")
    p.add_argument("--rdzv_endpoint", "--rdzv-endpoint", default=None, help="HOST:PORT of the c10d rendezvous")
    p.add_argument("--rdzv_id", "--rdzv-id", default=None, help="job id, the same on every node; names the run dir")
    p.add_argument("--master_port", "--master-port", type=port_number, default=None,
                   help="single node: rendezvous port")
    p.add_argument("--coordinator_address", default=None, help="JAX: HOST:PORT of process 0 (default: rdzv endpoint)")
    p.add_argument("--max_restarts", "--max-restarts", type=int, default=0, help="restarts of the group on failure")
    p.add_argument("--stop_timeout", type=float, default=20.0,
                   help="seconds a worker gets to checkpoint and exit after SIGTERM before SIGKILL (torch >= 2.12)")
    return p


def _nodes(nnodes: str) -> tuple[int, int]:
    try:
        low, _, high = nnodes.partition(":")
        low, high = int(low), int(high or low)
    except ValueError:
        raise FleetlabError(f"--nnodes must be N or MIN:MAX, got '{nnodes}'") from None
    if not 0 < low <= high:
        raise FleetlabError(f"--nnodes must satisfy 0 < MIN <= MAX, got '{nnodes}'")
    return low, high


def _check_port_free(port: int) -> None:
    with socket.socket() as s:
        try:
            s.bind(("", port))
        except OSError:
            raise FleetlabError(f"port {port} is already in use on this machine: pick a free one "
                             "(--master_port, or the port of --rdzv_endpoint)") from None


def _train_target(command: list[str]) -> tuple[str | None, list[str]]:
    """(library, train args) for `train ...` or an Isaac Lab script scripts/reinforcement_learning/<lib>/train.py;
    (None, command) for any other script."""
    if command[0] == "train":
        lib = ArgumentParser(add_help=False)
        lib.add_argument("--library", choices=LIBRARIES, default="rsl_rl")
        known, rest = lib.parse_known_args(command[1:])
        return known.library, rest
    parts = os.path.normpath(command[0]).split(os.sep)
    if len(parts) >= 2 and parts[-1] == "train.py" and parts[-2] in LIBRARIES:
        return parts[-2], command[1:]
    return None, command


def _run_dir(library: str, train_args, stamp: str | None) -> tuple[str, str]:
    """(run directory, framework) of the training run the workers will start, resolved as they will resolve it."""
    from fleetlab.rl.run import resolve_run
    from fleetlab.rl.run_dir import run_dir_path

    run = resolve_run(library, train_args, play=False)
    experiment, run_name = run.library.run_dir_parts(run)
    return run_dir_path(run.library.name, experiment, stamp, run_name), run.framework


def main(argv: list[str]) -> int:
    """`fleetlab launch ...`; a bad input raises FleetlabError (the CLI prints it as one line, exit code 2)."""
    if "--" not in argv:
        raise FleetlabError("put the command after '--': fleetlab launch --nproc_per_node 2 -- train --task ...")
    split = argv.index("--")
    opts = parser().parse_args(argv[:split])
    command = argv[split + 1:]
    if not command:
        raise FleetlabError("no command after '--'")
    become_subreaper()
    try:
        return _launch(opts, command)
    finally:
        end_descendants()  # no worker (nor anything a worker started) outlives the launcher


def _launch(opts, command: list[str]) -> int:
    from fleetlab.rl import args as rl_args
    from fleetlab.rl.run_dir import create_run_dir

    min_nodes, max_nodes = _nodes(opts.nnodes)
    if opts.nproc_per_node < 1:
        raise FleetlabError(f"--nproc_per_node must be at least 1, got {opts.nproc_per_node}")
    if opts.max_restarts < 0:
        raise FleetlabError(f"--max_restarts must be >= 0, got {opts.max_restarts}")
    for flag in ("rdzv_endpoint", "coordinator_address"):
        if getattr(opts, flag) is not None:
            host_and_port(f"--{flag}", getattr(opts, flag))
    library, rest = _train_target(command)
    framework = "torch"
    if library is not None:
        if "--distributed" not in rest:
            rest = [*rest, "--distributed"]  # implied: the launcher exists to run several processes
        train_args = rl_args.parse(library, play=False, argv=rest)
        _check_gpus(opts.nproc_per_node, train_args.device)
        if max_nodes > 1 and not opts.rdzv_id:
            raise FleetlabError("a multi-node launch needs --rdzv_id (the same on every node): it also names the run "
                                "directory, so every node and every restart agree on it")
        run_dir, framework = _run_dir(library, train_args, opts.rdzv_id if max_nodes > 1 else None)
        # A single-node launch gets a folder of its own (another run may have started in the same second); the
        # nodes of a multi-node run all train in the one named after --rdzv_id.
        run_dir = create_run_dir(run_dir, exclusive=max_nodes == 1)
        os.environ[RUN_DIR_VAR] = run_dir
        print(f"[fleetlab launch] {library}{'-jax' if framework == 'jax' else ''}: {opts.nproc_per_node} process(es) "
              f"per node, nodes {opts.nnodes}, max_restarts {opts.max_restarts}; run dir {run_dir}", flush=True)
    if framework == "jax":
        return _launch_jax(opts, min_nodes, max_nodes, library, rest)
    worker = ["-m", "fleetlab", "train", "--library", library, *rest] if library else command
    return _launch_torch(opts, max_nodes, worker)


def host_and_port(flag: str, value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host:
        raise FleetlabError(f"{flag} must be HOST:PORT, got '{value}'")
    try:
        return host, port_number(port)
    except argparse.ArgumentTypeError:
        raise FleetlabError(f"{flag} must be HOST:PORT with a port in 1..65535, got '{value}'") from None


def _check_gpus(nproc: int, device: str | None) -> None:
    import torch

    if device == "cpu" or not torch.cuda.is_available():
        return
    count = torch.cuda.device_count()
    if nproc > count:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
        raise FleetlabError(f"--nproc_per_node {nproc} is more than the {count} GPU(s) visible here "
                            f"(CUDA_VISIBLE_DEVICES={visible}): one process per GPU")


def _launch_torch(opts, max_nodes: int, worker: list[str]) -> int:
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    args = ["--nnodes", opts.nnodes, "--nproc_per_node", str(opts.nproc_per_node),
            "--max_restarts", str(opts.max_restarts)]
    if "--shutdown_timeout" in torchrun.get_args_parser()._option_string_actions:  # torch >= 2.12; before: 30 s
        args += ["--shutdown_timeout", str(int(opts.stop_timeout))]
    if os.environ.get(RUN_DIR_VAR):
        args += ["--log_dir", os.path.join(os.environ[RUN_DIR_VAR], "launch")]  # torchelastic's error files
    if opts.rdzv_endpoint:
        args += ["--rdzv_backend", "c10d", "--rdzv_endpoint", opts.rdzv_endpoint,
                 "--rdzv_id", opts.rdzv_id or "fleetlab"]
        if opts.node_rank is not None:
            args += ["--node_rank", str(opts.node_rank)]
        if max_nodes == 1:
            _check_port_free(int(opts.rdzv_endpoint.rsplit(":", 1)[1]))
    elif max_nodes > 1:
        raise FleetlabError("a multi-node launch needs --rdzv_endpoint HOST:PORT (the first node's address)")
    elif opts.master_port is not None:
        _check_port_free(opts.master_port)
        args += ["--rdzv_backend", "c10d", "--rdzv_endpoint", f"localhost:{opts.master_port}"]
    else:
        args += ["--standalone"]  # a free port on localhost
    # Upstream's c10d rendezvous shares ONE TCPStore with the workers for the whole job, with no per-attempt prefix:
    # after a restart, the new gloo group reads the dead workers' addresses left in it and fails ("Connection
    # refused"). torch's own switch gives every rendezvous round a fresh store, hosted by the new rank 0.
    os.environ.setdefault("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1")
    targs = torchrun.parse_args(args + worker)
    try:
        torchrun.run(targs)
    except ChildFailedError as err:
        rank, failure = err.get_first_failure()
        code = failure.exitcode if failure.exitcode > 0 else 128 - failure.exitcode
        how = f"signal {-failure.exitcode}" if failure.exitcode < 0 else f"exit code {code}"
        print(f"[fleetlab launch] rank {rank} failed ({how}); exit code {code}. Its output: rank 0 above, other "
              f"ranks in <run dir>/logs/rank_{rank}.log", file=sys.stderr, flush=True)
        return code
    except SignalException as err:
        print(f"[fleetlab launch] stopped by {signal.Signals(err.sigval).name}", file=sys.stderr, flush=True)
        return 128 + int(err.sigval)
    return 0


def _launch_jax(opts, min_nodes: int, max_nodes: int, library: str, train_args: list[str]) -> int:
    if min_nodes != max_nodes:
        raise FleetlabError("skrl's JAX launcher has a fixed number of nodes: --nnodes N, not MIN:MAX")
    address = opts.coordinator_address or opts.rdzv_endpoint
    if address is None:
        port = opts.master_port or _free_port()
        address = f"127.0.0.1:{port}"
    if max_nodes == 1:
        _check_port_free(int(address.rsplit(":", 1)[1]))
    main_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py")
    cmd = [sys.executable, "-m", "fleetlab.distributed.jax_launch", "--nnodes", str(max_nodes),
           "--nproc_per_node", str(opts.nproc_per_node), "--node_rank", str(opts.node_rank or 0),
           "--coordinator_address", address, main_py, "train", "--library", library, *train_args]
    code = 0
    for attempt in range(opts.max_restarts + 1):
        # Each attempt is a fresh group from skrl's launcher; workers resume from the run dir's checkpoints.
        proc = subprocess.Popen(cmd, env={**os.environ, "FLEETLAB_RESTART_COUNT": str(attempt)})
        forward = lambda signum, _frame: proc.send_signal(signum)  # noqa: E731
        previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
        code = proc.wait()
        code = code if code >= 0 else 128 - code
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if code == 0 or code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
            return code
        if attempt < opts.max_restarts:
            print(f"[fleetlab launch] JAX group failed (exit code {code}): restart {attempt + 1}/{opts.max_restarts}",
                  file=sys.stderr, flush=True)
    return code


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
