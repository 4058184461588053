"""Issue D: what a fleetlab process does before training, step by step, on one device: seconds since the process
started after each import and each stage of building the Humanoid's Warp env (the part of `startup_s` in
summary.json that is not compile). Writes OUT/startup_probe.json.

    python benchmarks/startup_probe.py OUT [DEVICE]
"""

import json
import os
import sys
import time

import psutil

marks = {}


def mark(name):
    marks[name] = round(time.time() - psutil.Process().create_time(), 3)


mark("python_started")
import fleetlab  # noqa: E402,F401

import torch  # noqa: E402,F401

mark("torch")
import jax  # noqa: E402

mark("jax")
import mujoco.mjx  # noqa: E402,F401

mark("mujoco.mjx")
import fleetlab.rl.workflow  # noqa: E402,F401
import fleetlab.tasks  # noqa: E402,F401

mark("fleetlab")
device = sys.argv[2] if len(sys.argv) > 2 else "cuda:0"
from fleetlab.sim.mjx import jax_device_for  # noqa: E402

jax_device_for(device)
jax.device_put(jax.numpy.zeros(1), jax_device_for(device)).block_until_ready()
mark("jax_backend_ready")
import warp  # noqa: E402

warp.init()
mark("warp_init")
from fleetlab.envs.registry import make_from_entry, resolve  # noqa: E402

entry = resolve("Isaac-Humanoid-v0")
env = make_from_entry(entry, 16384, device, 0, "warp")
mark("vec_env_built")
import brax.training.agents.ppo.train  # noqa: E402,F401

mark("brax_imported")
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "startup_probe.json"), "w") as f:
    json.dump(marks, f, indent=1)
print(json.dumps(marks))
