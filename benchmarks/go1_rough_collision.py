"""Where a Go1 rough env step goes on MJX's JAX implementation: mjx.collision and mjx.step of one physics step for
256 Go1s standing on the flat plane and on the rough terrain (benchmarks/results/2026-12-08_cpu_go1_rough).
Run from the repo root: .venv/bin/python benchmarks/go1_rough_collision.py"""
import sys
import time

sys.path.insert(0, 'src')
import jax
import jax.numpy as jnp
import numpy as np
from mujoco import mjx

from fleetlab.envs.core import Env
from fleetlab.tasks.go1.cfg import go1_flat
from fleetlab.tasks.go1.rough_cfg import go1_rough

N = 256
for name, cfg in (("flat", go1_flat()), ("rough", go1_rough())):
    core = Env(cfg, name, impl="jax")
    m = core.scene.mj_model
    mx = mjx.put_model(m)
    d = mjx.make_data(mx)
    qpos = jnp.asarray(core.scene.default_qpos, jnp.float32)
    # on rough ground: a random-rough tile of row 2
    base = np.asarray(core.tiles.origins[2, 13]) if core.tiles else np.zeros(3)
    qpos = qpos.at[0:3].set(jnp.asarray(base + [0, 0, 0.35], jnp.float32))
    d = d.replace(qpos=qpos)
    batch = jax.vmap(lambda _: d)(jnp.arange(N))
    fwd = jax.jit(jax.vmap(lambda dd: mjx.kinematics(mx, dd)))
    batch = fwd(batch)
    batch = jax.jit(jax.vmap(lambda dd: mjx.com_pos(mx, dd)))(batch)
    for fname, f in (("collision", lambda dd: mjx.collision(mx, dd)), ("step", lambda dd: mjx.step(mx, dd))):
        jf = jax.jit(jax.vmap(f))
        out = jf(batch)
        jax.block_until_ready(out)
        t = time.perf_counter()
        for _ in range(5):
            out = jf(batch)
        jax.block_until_ready(out)
        print(name, fname, "ms", round((time.perf_counter() - t) / 5 * 1000, 2))
