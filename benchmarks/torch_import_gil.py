"""How long a thread that wants Python's GIL every 0.5 ms waits while another thread imports torch in a process
that has imported the brax session (jax, brax, MuJoCo Warp): what MuJoCo Warp's FFI callbacks inside a running brax
epoch go through (rl/brax/session.py).

    PYTHONPATH=src python benchmarks/torch_import_gil.py import|freeze [--json FILE]

Both modes import torch at a 10 us switch interval (SWITCH_INTERVAL_S), as the brax session did from a53ffc1 until
its checkpoints stopped needing torch (91f952c); `freeze` first freezes the process's objects (gc.freeze), as it
did. Run each mode in a fresh process. The waiting thread starts its clock before the importing thread starts, so a
hold at the import's very start is counted too."""

import argparse
import gc
import importlib
import json
import sys
import threading
import time

import fleetlab.rl.brax.session  # noqa: F401  (jax, brax, MuJoCo Warp: the objects a collection walks)

SWITCH_INTERVAL_S = 1e-5

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=("import", "freeze"))
parser.add_argument("--json")
args = parser.parse_args()
assert "torch" not in sys.modules, "torch was imported before the measurement"
done = threading.Event()
collections = []  # (generation, seconds) of each garbage collection during the import
gc_started = []


def on_gc(phase, info):
    if phase == "start":
        gc_started[:] = [time.perf_counter()]
    elif gc_started:
        collections.append((info["generation"], time.perf_counter() - gc_started[0]))


def work():
    if args.mode == "freeze":
        gc.freeze()
    gc.callbacks.append(on_gc)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    importlib.import_module("torch")
    done.set()


waits = []
thread = threading.Thread(target=work)
start = time.perf_counter()
thread.start()
while True:
    time.sleep(0.0005)
    now = time.perf_counter()
    waits.append(now - start - 0.0005)
    start = now
    if done.is_set():
        break
thread.join()
waits.sort()
longest_gc = max((s for g, s in collections), default=0.0)
result = {"mode": args.mode, "wakeups": len(waits), "waited_s": round(sum(waits), 3),
          "max_wait_ms": round(1e3 * waits[-1], 1), "longest_5_waits_ms": [round(1e3 * w, 1) for w in waits[-5:]],
          "collections": len(collections), "full_collections": sum(g == 2 for g, s in collections),
          "longest_collection_ms": round(1e3 * longest_gc, 1)}
print(json.dumps(result))
if args.json:
    with open(args.json, "w") as f:
        json.dump(result, f)
