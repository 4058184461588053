"""How long a thread that wants Python's GIL every 0.5 ms waits while another thread imports torch (what MuJoCo
Warp's FFI callbacks inside a running brax epoch go through; see rl/brax/session.py).

    PYTHONPATH=src python benchmarks/torch_import_gil.py import|preload [--json FILE]

Both modes import torch at the session's switch interval (IMPORT_SWITCH_INTERVAL_S); `preload` first loads torch's
libraries as the session does (`load_torch_libraries`: dlopen through ctypes, without the GIL). Run each mode in a
fresh process."""

import argparse
import importlib
import json
import sys
import threading
import time

from fleetlab.rl.brax.session import IMPORT_SWITCH_INTERVAL_S, load_torch_libraries

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=("import", "preload"))
parser.add_argument("--json")
args = parser.parse_args()
assert "torch" not in sys.modules, "torch was imported before the measurement"
done = threading.Event()
phases = {}


def work():
    t0 = time.perf_counter()
    if args.mode == "preload":
        load_torch_libraries()
        phases["preload_s"] = time.perf_counter() - t0
    sys.setswitchinterval(IMPORT_SWITCH_INTERVAL_S)
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
