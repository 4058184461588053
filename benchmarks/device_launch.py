"""GPU checks of `fleetlab launch` (device tool, one GPU): kill -9 + auto-resume (rsl_rl), SIGTERM graceful stop
(rl_games, skrl-torch, skrl-JAX), and the more-processes-than-GPUs error. Writes $OUT/launch_gpu.json.

    python3 benchmarks/device_launch.py        (after the .whl install line; see benchmarks/device_run.sh)
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import psutil

OUT = os.environ.get("OUT", "/tmp/out")
results = {}


def start(args, cwd):
    log = open(os.path.join(cwd, "console.log"), "w")
    return subprocess.Popen([sys.executable, "-m", "fleetlab", "launch", *args], cwd=cwd, stdout=log,
                            stderr=subprocess.STDOUT), os.path.join(cwd, "console.log")


def wait_for(path, pattern, proc, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if re.search(pattern, open(path).read()):
            return True
        time.sleep(0.2)
    return False


def kill9_resume():
    cwd = "/tmp/kill9"
    os.makedirs(cwd, exist_ok=True)
    t0 = time.time()
    proc, log = start(["--nproc_per_node", "1", "--max_restarts", "1", "--", "train", "--library", "rsl_rl",
                       "--num_envs", "4096", "--max_iterations", "150", "agent.save_interval=20"], cwd)
    ok = wait_for(log, r"it\s+45/150", proc)
    if not ok:
        print(open(log).read()[-3000:], flush=True)
    workers = [p for p in psutil.Process(proc.pid).children(recursive=True) if "RANK" in p.environ()] if ok else []
    if ok and workers:
        os.kill(workers[0].pid, signal.SIGKILL)
    proc.wait(600)
    text = open(log).read()
    resumed = re.search(r"auto-resume from (\S+): iterations (\d+) to", text)
    results["kill9_rsl_rl"] = {"rc": proc.returncode, "killed_at_iteration_line": "it    45/150",
                               "wall_s": time.time() - t0,
                               "resumed_from": resumed.group(1) if resumed else None,
                               "resumed_at": int(resumed.group(2)) if resumed else None,
                               "finished": "checksums identical across ranks: True" in text, "tail": text[-1500:]}


def sigterm(name, train):
    cwd = f"/tmp/sigterm_{name}"
    os.makedirs(cwd, exist_ok=True)
    proc, log = start(["--nproc_per_node", "1", "--", "train", *train, "--num_envs", "4096",
                       "--max_iterations", "5000"], cwd)
    ready = wait_for(log, "stop at the next iteration boundary", proc)
    time.sleep(8)
    t = time.time()
    proc.send_signal(signal.SIGTERM)
    proc.wait(120)
    text = open(log).read()
    stopped = re.search(r"stopped by SIGTERM; checkpoint: (\S+)", text)
    path = stopped.group(1) if stopped else None
    if path and name.startswith("skrl"):
        path += ".pickle" if "jax" in name else ".pt"
    results[f"sigterm_{name}"] = {"rc": proc.returncode, "ready": ready, "stop_s": time.time() - t,
                                  "checkpoint": path, "checkpoint_exists": bool(path and os.path.isfile(path)),
                                  "tail": text[-1200:]}


kill9_resume()
sigterm("rl_games", ["--library", "rl_games"])
sigterm("skrl_torch", ["--library", "skrl"])
sigterm("skrl_jax", ["--library", "skrl", "--ml_framework", "jax"])
r = subprocess.run([sys.executable, "-m", "fleetlab", "launch", "--nproc_per_node", "2", "--", "train"],
                   capture_output=True, text=True)
results["two_procs_one_gpu"] = {"rc": r.returncode, "stderr": r.stderr}
results["machine"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                    text=True).stdout.strip()
# .git does not travel to the device: the caller passes the commit (FLEETLAB_COMMIT=$(git rev-parse HEAD))
results["commit"] = os.environ.get("FLEETLAB_COMMIT") or subprocess.run(
    ["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
results["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
results["command"] = "python3 benchmarks/device_launch.py (after the .whl install line of benchmarks/device_run.sh)"
json.dump(results, open(os.path.join(OUT, "launch_gpu.json"), "w"), indent=2)
print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "tail"} if isinstance(v, dict) else v
                  for k, v in results.items()}, indent=1))
