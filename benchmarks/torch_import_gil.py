"""How long a thread that wants Python's GIL every 0.5 ms waits while another thread imports torch (what MuJoCo
Warp's FFI callbacks inside a running brax epoch go through; see rl/brax/session.py).

    python benchmarks/torch_import_gil.py import|preload [--json FILE]

`import`: the import at a 10 us switch interval; `preload`: torch's libraries loaded through ctypes (dlopen
without the GIL) first, then the same import. Run each mode in a fresh process."""

import argparse
import ctypes
import importlib
import importlib.machinery
import json
import os
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=("import", "preload"))
parser.add_argument("--json")
args = parser.parse_args()
lib = os.path.join(os.path.dirname(importlib.machinery.PathFinder.find_spec("torch").origin), "lib")
done = threading.Event()
phases = {}


def work():
    t0 = time.perf_counter()
    if args.mode == "preload":
        ctypes.CDLL(os.path.join(lib, "libtorch_python.so"))
        phases["preload_s"] = time.perf_counter() - t0
    sys.setswitchinterval(1e-5)
    importlib.import_module("torch")
    phases["total_s"] = time.perf_counter() - t0
    done.set()


waits = []
thread = threading.Thread(target=work)
thread.start()
while not done.is_set():
    start = time.perf_counter()
    time.sleep(0.0005)
    waits.append(time.perf_counter() - start - 0.0005)
thread.join()
waits.sort()
result = {"mode": args.mode, **{k: round(v, 3) for k, v in phases.items()}, "wakeups": len(waits),
          "waited_s": round(sum(waits), 3), "max_wait_ms": round(1e3 * waits[-1], 1),
          "p99_wait_ms": round(1e3 * waits[int(0.99 * len(waits))], 2)}
print(json.dumps(result))
if args.json:
    with open(args.json, "w") as f:
        json.dump(result, f)
