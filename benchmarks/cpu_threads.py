"""Issue N, item 1: single-process CPU training FPS per thread setting, on an idle machine and with one core kept
busy by another process. Each run is a fresh `fleetlab train` (Cartpole); variants alternate within a round.

    python benchmarks/cpu_threads.py OUT.json [ROUNDS]      (run from the repo root, with .venv's python)

A variant is extra train flags and environment variables: --threads 0 keeps torch's default (fleetlab sets none),
OMP_NUM_THREADS=1 gives torch one thread, XLA_FLAGS gives XLA one CPU thread (it steps the JAX physics in every
workflow); "fleetlab" is what fleetlab picks by itself.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

XLA_ONE = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
VARIANTS = {  # name -> (flags, environment)
    "default": (["--threads", "0"], {}),
    "torch1": (["--threads", "0"], {"OMP_NUM_THREADS": "1"}),
    "xla1": (["--threads", "0"], {"XLA_FLAGS": XLA_ONE}),
    "both1": (["--threads", "0"], {"OMP_NUM_THREADS": "1", "XLA_FLAGS": XLA_ONE}),
    "fleetlab": ([], {}),  # what fleetlab picks by itself
}
RUNS = {  # library -> (train flags, variants)
    "rsl_rl": (["--library", "rsl_rl"], ["default", "torch1", "xla1", "both1", "fleetlab"]),
    "brax": (["--library", "brax"], ["default", "xla1", "fleetlab"]),
}


def one(lib_flags: list[str], variant: tuple[list[str], dict]) -> float:
    flags, env = variant
    with tempfile.TemporaryDirectory() as work:
        cmd = [sys.executable, "-m", "fleetlab", "train", *lib_flags, *flags, "--task", "Isaac-Cartpole-v0",
               "--device", "cpu", "--num_envs", "512", "--max_iterations", "15", "--seed", "1"]
        full = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "XLA_FLAGS")}
        full.update(env, PYTHONPATH=os.path.abspath("src"), JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
        subprocess.run(cmd, cwd=work, env=full, check=True, capture_output=True)
        path = next(os.path.join(d, f) for d, _, fs in os.walk(work) for f in fs if f == "summary.json")
        return json.load(open(path))["perf"]["train_fps"]


def main() -> None:
    out, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    results = {}
    for load in ("idle", "busy"):
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if load == "busy" else None
        try:
            for _ in range(rounds):
                for lib, (flags, variants) in RUNS.items():
                    for name in variants:
                        fps = one(flags, VARIANTS[name])
                        results.setdefault(f"{load} {lib} {name}", []).append(fps)
                        print(f"{load} {lib} {name}: {fps:,.0f}", flush=True)
        finally:
            if spinner is not None:
                spinner.kill()
        time.sleep(1)
    table = {k: {"runs": v, "median": statistics.median(v)} for k, v in results.items()}
    json.dump({"nproc": os.cpu_count(), "results": table}, open(out, "w"), indent=1)
    for k, v in table.items():
        print(f"{k}: median {v['median']:,.0f}")


if __name__ == "__main__":
    main()
