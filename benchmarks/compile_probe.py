"""Where a task's first env step goes on the GPU (issue H): XLA's lower and compile, then the first call, timed
apart; the optimized HLO goes to $OUT/hlo_<label>.txt.

    python3 benchmarks/compile_probe.py SRC_FOLDER TASK LABEL     (after the installs of benchmarks/device_warp.sh)
"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.time()
import jax, jax.numpy as jnp
import fleetlab.tasks  # noqa
from fleetlab.envs import make
env = make(sys.argv[2], num_envs=4096, seed=7, device="cuda:0", impl="warp")
jax.block_until_ready(env.state.obs)
t1 = time.time()
a = jnp.zeros((4096, env.num_actions), jnp.float32)
lowered = env._step_jax_fn.lower(env.state, a)
t2 = time.time()
compiled = lowered.compile()
t3 = time.time()
out = compiled(env.state, a)
jax.block_until_ready(out[1])
t4 = time.time()
txt = lowered.as_text()
print(sys.argv[1], sys.argv[2], f"make {t1-t0:.1f} lower {t2-t1:.1f} compile {t3-t2:.1f} first call {t4-t3:.1f}",
      "lines", len(txt.splitlines()), "custom_calls", txt.count("custom_call"), flush=True)
hlo = compiled.as_text()
open(os.path.join(os.environ.get("OUT", "/tmp"), f"hlo_{sys.argv[3]}.txt"), "w").write(hlo)
