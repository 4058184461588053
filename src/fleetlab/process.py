"""Everything fleetlab changes in its own process, in one place, and undone at the end (in the spirit of
torchtitan's process setup). Importing fleetlab changes nothing; the CLI does, in two steps:

    with ProcessSetup() as process:          # before JAX, MuJoCo and the libraries are imported
        run = resolve_run(...)               # (imports them)
        process.configure_process(run)       # once the run is known; prints what was set in one line
        ... with process.stop_signals() as stop: session.learn(stop)

What it owns, and why:
- environment variables that JAX and MuJoCo read when they are imported or start their backends: no GPU
  preallocation by JAX (torch shares the card), JAX's compilation cache, the offscreen renderer for videos;
- torch's CPU threads (docs/performance.md has the measurements behind the default);
- the output streams: whole lines per write, and ranks > 0 of `fleetlab launch` writing to their log file;
- SIGINT/SIGTERM while training: a graceful stop at the next iteration boundary, the old handlers back after;
- the count of XLA compilations (summary.json's jax_backend_compiles);
- the garbage-collector policy (below).

The collector: a full collection walks every object of the process while holding the GIL, and a process with
jax, MuJoCo Warp and a library loaded holds ~650k objects, nearly all as long-lived as the process. So the
collector is off through the imports, the env build and (brax) the trace of its program, and comes back with
those objects frozen (left out of later collections) when training begins (`freeze_and_restart_collector`). On an
H100 this saved 10-15% of the whole-process time of Humanoid and Go1 runs, rsl_rl and brax alike
(benchmarks/results/2026-12-07_h100_workarounds). Frozen objects are never freed, which a process that keeps them
to its end loses nothing by.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import gc
import os
import signal
import sys
from typing import Iterator, NoReturn

from fleetlab.distributed import RunContext
from fleetlab.distributed.context import launched_run_dir

JAX_CACHE_DIR = os.path.join(os.path.expanduser("~"), ".cache", "fleetlab", "jax-lru")


def import_environment() -> dict[str, str]:
    """The environment variables fleetlab wants set before JAX, MuJoCo and rsl_rl are imported; a value the user
    set already wins (they are applied with setdefault)."""
    env = {
        # JAX and torch share one GPU: without this JAX grabs 75% of the card at its first call and torch runs out.
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        # Compiled programs are cached on disk: the second run of a task skips most of its JIT time. Every program,
        # not only those over JAX's default 1 s: a Brax run also compiles ~50 small ones that add up to ~4 s on a
        # GPU. With a size cap JAX also locks the folder around each read and write, which the 2+ processes of a
        # run writing the same small programs at once need; capped entries carry an access-time file that uncapped
        # ones lack, hence a folder of its own.
        "JAX_COMPILATION_CACHE_DIR": JAX_CACHE_DIR,
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_COMPILATION_CACHE_MAX_SIZE": str(4 << 30),  # 4 GiB, least recently used entries go first
        "GIT_PYTHON_REFRESH": "quiet",  # rsl_rl imports GitPython, which wants a git binary
    }
    # Offscreen video rendering, chosen by MuJoCo when imported: EGL on an NVIDIA machine, OSMesa on a CPU one,
    # each only if its library is installed (mujoco fails to import with a MUJOCO_GL whose library is missing).
    if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
        gl = "egl" if os.path.exists("/dev/nvidia0") else "osmesa"
        if ctypes.util.find_library("EGL" if gl == "egl" else "OSMesa"):
            env.update(MUJOCO_GL=gl, PYOPENGL_PLATFORM=gl)
    return env


def cpu_threads(run) -> int | None:
    """torch's CPU threads: --threads, else 1 when this process computes on the CPU (its device is the CPU), else
    torch's default (None). On a 2-core machine one thread trained rsl_rl 3.6x faster than torch's default beside
    one busy core and 0.90x as fast on an idle machine (docs/performance.md); torchrun sets OMP_NUM_THREADS=1 for
    the same reason. XLA keeps its own threads: one XLA thread gained nothing busy and cost 20% idle.
    --threads 0 keeps torch's default."""
    if run.threads is not None:
        return run.threads or None
    if "OMP_NUM_THREADS" in os.environ:  # the user's (or torchrun's) choice
        return None
    import torch

    # no --device: RunContext picks cuda:LOCAL_RANK where torch sees a GPU, else the CPU
    on_cpu = run.device == "cpu" or (run.device is None and not torch.cuda.is_available())
    return 1 if on_cpu else None


class ProcessSetup:
    """The process's state as fleetlab sets it; `restore()` (the end of a `with` block) puts back what it changed."""

    def __init__(self):
        self.changes: list[str] = []
        self._undo: list = []
        self._set_environment(import_environment())
        # the collector is off until training begins (freeze_and_restart_collector): the imports, the env build
        # and a trace make long-lived objects only
        if gc.isenabled():
            gc.disable()
            self._undo.append(gc.enable)
        self.changes.append("garbage collector off until training starts")

    def __enter__(self) -> ProcessSetup:
        return self

    def __exit__(self, *_exc) -> None:
        self.restore()

    def _set_environment(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            if name in os.environ:
                continue
            os.environ[name] = value
            self._undo.append(lambda name=name: os.environ.pop(name, None))
            self.changes.append(f"{name}={value}")

    def configure_process(self, run) -> None:
        """What depends on the run (rl/run.py's Run): threads, streams, the XLA compile counter. Called after
        resolve_run, before the run's env starts JAX's backend. Prints one line saying what fleetlab set."""
        import jax

        if jax._src.xla_bridge.backends_are_initialized():  # a second run in one process (tests, a notebook)
            self.changes.append("JAX started already: its settings are the first run's")
        self._redirect_worker_output(launched_run_dir())
        for stream in (sys.stdout, sys.stderr):
            if (undo := write_whole_lines(stream)) is not None:
                self._undo.append(undo)
                self.changes.append(f"whole lines per write on {stream.name}")
        # the JAX workflows never import torch (brax's start-up is torch-free)
        if run.framework == "torch" and (threads := cpu_threads(run)) is not None:
            import torch

            old = torch.get_num_threads()
            torch.set_num_threads(threads)
            self._undo.append(lambda: torch.set_num_threads(old))
            self.changes.append(f"torch threads {threads}")
        XLA.start()
        print(f"[fleetlab] process: {'; '.join(self.changes)}", flush=True)

    def _redirect_worker_output(self, run_dir: str | None) -> None:
        """In a worker of `fleetlab launch`: ranks other than 0 write stdout and stderr to <run dir>/logs/rank_<R>.log
        (appended across restarts), so the console shows rank 0 only."""
        rank = os.environ.get("RANK", os.environ.get("JAX_RANK", "0"))
        if not run_dir or rank == "0":
            return
        os.makedirs(os.path.join(run_dir, "logs"), exist_ok=True)
        path = os.path.join(run_dir, "logs", f"rank_{rank}.log")
        log = open(path, "a", buffering=1)
        restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", os.environ.get("FLEETLAB_RESTART_COUNT", "0"))
        log.write(f"==== rank {rank}, restart {restart}, pid {os.getpid()} ====\n")
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)

        def undo():
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            log.close()

        self._undo.append(undo)
        self.changes.append(f"output to {path}")

    @contextlib.contextmanager
    def stop_signals(self) -> Iterator[StopRequest]:
        """SIGINT/SIGTERM raise a flag that the training loop checks at iteration boundaries (a graceful stop after a
        checkpoint), inside this block only: before it (imports, compiles) they end the process as usual, and
        after it the handlers that were there before are back."""
        stop = StopRequest()
        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, stop.handle)
            except ValueError:  # not the main thread (a test runner's thread)
                pass
        print("[fleetlab] on SIGINT/SIGTERM: stop at the next iteration boundary, after a checkpoint", flush=True)
        try:
            yield stop
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def restore(self) -> None:
        """Put back what this setup changed, last change first (for a caller that goes on: tests, notebooks)."""
        while self._undo:
            self._undo.pop()()


def write_whole_lines(stream):
    """Each printed line reaches the OS in ONE write. Under PYTHONUNBUFFERED (set on many clusters and CI machines)
    print() writes the text and its newline separately, so when several ranks share one console (torchrun) another
    rank's line can land between them. Line buffering flushes text and newline together, as soon as the line is
    complete. Returns what undoes it (None: nothing to do)."""
    if not hasattr(stream, "reconfigure") or stream.line_buffering:
        return None
    write_through = stream.write_through
    stream.reconfigure(line_buffering=True, write_through=False)
    return lambda: stream.reconfigure(line_buffering=False, write_through=write_through)


def exit_process(code: int) -> NoReturn:
    """sys.exit for a process whose work is done. Python's last garbage collection at exit walks every object still
    alive, ~1.5 s for MuJoCo Warp's kernel objects alone; frozen objects are left to the OS, which frees them at
    once. Only for a process about to end: frozen objects are never collected."""
    gc.freeze()
    sys.exit(code)


def freeze_and_restart_collector() -> None:
    """Training begins: every object alive now is left out of later collections, and the collector runs again."""
    gc.freeze()
    gc.enable()


def pause_collector() -> None:
    """Off again until freeze_and_restart_collector: for a library that traces its program after training began
    (brax's epoch program: long-lived objects only)."""
    gc.disable()


class StopRequest:
    """A stop asked for by SIGINT/SIGTERM (ProcessSetup.stop_signals installs `handle`); the training loop checks it
    at iteration boundaries. A second SIGINT gets Python's default KeyboardInterrupt. torchrun's agent forwards its
    signal to the workers and SIGKILLs them after its shutdown timeout, so a rank stuck in a collective still ends."""

    def __init__(self):
        self.signum = 0

    def handle(self, signum, _frame):
        if self.signum == signal.SIGINT and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum
        print(f"[fleetlab] {signal.Signals(signum).name} received: stopping after this iteration (checkpoint first)",
              flush=True)

    def agreed(self, ctx: RunContext) -> int:
        """The signal number if ANY rank was asked to stop (a collective), else 0: all ranks stop together."""
        if not ctx.is_distributed:
            return self.signum
        if ctx.backend == "jax":
            return max(ctx.all_gather_object(self.signum))
        import torch
        import torch.distributed as dist

        flag = torch.tensor([self.signum], device=ctx.device if ctx.backend == "nccl" else "cpu")
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return int(flag.item())


class CompileCounter:
    """XLA compilations in this process since configure_process, with their seconds (XLA's backend compile, and
    JAX's tracing and lowering before it), from a jax.monitoring listener (registered once: JAX has no public way
    to remove one). A JAX workflow whose count keeps rising after its first iterations is recompiling (a retrace on
    new shapes or shardings), which costs far more than the step itself."""

    def __init__(self):
        self.count, self.compile_s, self.trace_s = 0, 0.0, 0.0
        self._registered = False

    def start(self) -> None:
        import jax

        self.count, self.compile_s, self.trace_s = 0, 0.0, 0.0
        if not self._registered:
            self._registered = True
            jax.monitoring.register_event_duration_secs_listener(self._event)

    def _event(self, event: str, secs: float, **_kwargs) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            self.count += 1
            self.compile_s += secs
        elif event in ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration"):
            self.trace_s += secs


XLA = CompileCounter()  # the process's one listener (summary.json's jax_backend_compiles)
