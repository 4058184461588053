"""Where a fleetlab process spends time in Python's garbage collector.

    PYTHONPATH=src python benchmarks/gc_probe.py OUT.json train --library brax --task Isaac-Humanoid-v0 ...

Runs the CLI in this process with a gc.callbacks hook and writes OUT.json: every collection's start (seconds since
this script began), generation and duration, the totals per generation, the run's summary.json timeline (learn()'s
start, epoch ends) and the peak resident memory. Observation only: the hook changes no behaviour."""

import gc
import glob
import json
import os
import resource
import sys
import time

T0 = time.perf_counter()
collections = []
_start = [0.0]


def _hook(phase, info):
    if phase == "start":
        _start[0] = time.perf_counter()
    else:
        collections.append((round(_start[0] - T0, 3), info["generation"], round((time.perf_counter() - _start[0]) * 1e3, 2)))


gc.callbacks.append(_hook)
out_path, argv = sys.argv[1], sys.argv[2:]
from fleetlab.cli import main  # noqa: E402

code = main(argv)
end = time.perf_counter() - T0
summaries = sorted(glob.glob(os.path.join("logs", "*", "*", "*", "summary.json")), key=os.path.getmtime)
final = json.load(open(summaries[-1]))["final"] if summaries else {}
with open(out_path, "w") as f:
    json.dump({"argv": argv, "code": code, "end_s": round(end, 3),
               "learn_start_s": final.get("learn_start_s"), "epoch_end_s": final.get("epoch_end_s"),
               "collections": len(collections),
               "ms_by_generation": [round(sum(c[2] for c in collections if c[1] == g), 1) for g in range(3)],
               "full_collections": [c for c in collections if c[1] == 2],
               "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}, f, indent=1)
sys.exit(code)
