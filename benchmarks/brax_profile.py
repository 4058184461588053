"""Issue D: where a steady brax iteration's GPU time goes. Trains the Humanoid on Warp for 3 epochs of 5
iterations, records a JAX profiler trace (perfetto) of the second epoch, and writes the device time per kernel
name, largest first, to OUT/brax_profile.json.

    python benchmarks/brax_profile.py OUT [NUM_ENVS [TASK DEVICE PHYSICS]]   (default 16384 Isaac-Humanoid-v0 cuda:0 warp)
"""

import glob
import gzip
import json
import os
import sys
from collections import defaultdict

import jax

from fleetlab.cli import main
from fleetlab.rl.brax.session import BraxSession

out = sys.argv[1]
num_envs, task, device, physics = (sys.argv[2:] + ["16384", "Isaac-Humanoid-v0", "cuda:0", "warp"][len(sys.argv) - 2:])[:4]
trace_dir = os.path.join(out, "trace")
progress = BraxSession._progress


def traced_progress(self, step, metrics):  # the trace spans the second epoch only: no compile, no start-up
    progress(self, step, metrics)
    if len(self.sps) == 1:
        jax.profiler.start_trace(trace_dir, create_perfetto_trace=True)
    elif len(self.sps) == 2:
        jax.profiler.stop_trace()


BraxSession._progress = traced_progress
code = main(["train", "--library", "brax", "--task", task, "--num_envs", num_envs, "--max_iterations",
             "15", "--physics_impl", physics, "--headless", "--device", device, "agent.log_interval=5"])
path = glob.glob(os.path.join(trace_dir, "**", "*perfetto_trace.json.gz"), recursive=True)[0]
with gzip.open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
kind = "GPU" if device.startswith("cuda") else "CPU"
gpu_pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and kind in str(e.get("args", {}).get("name", ""))}
per_name, count = defaultdict(float), defaultdict(int)
for e in events:
    if e.get("ph") == "X" and e.get("pid") in gpu_pids:
        per_name[e["name"]] += e.get("dur", 0) / 1e3
        count[e["name"]] += 1
total = sum(per_name.values())
rows = sorted(per_name.items(), key=lambda kv: -kv[1])
result = {"rc": code, "num_envs": int(num_envs), "iterations_traced": 5, "gpu_ms_total": total,
          "top": [{"name": n[:160], "ms": round(ms, 2), "calls": count[n], "share": round(ms / total, 4)}
                  for n, ms in rows[:60]]}
with open(os.path.join(out, "brax_profile.json"), "w") as f:
    json.dump(result, f, indent=1)
os.remove(path)  # large; the summary above is what comes back
print(json.dumps({k: result[k] for k in ("rc", "gpu_ms_total")}), *[f"{r['ms']:9.1f} ms {r['calls']:6d} {r['name'][:90]}" for r in result["top"][:25]], sep="\n")
