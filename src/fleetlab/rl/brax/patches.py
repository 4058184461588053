"""The one upstream gap Brax 0.14.2 (its newest release) has on our JAX: it calls `jax.device_put_replicated`
(ppo.train's TrainingState; pmap.bcast_local_devices), which JAX removed in 0.10. Installed only while a session
trains, never at import."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.patching import swapped


def device_put_replicated(tree, devices):
    """What jax.device_put_replicated did: one copy of every leaf on each device, stacked along a leading axis
    sharded over `devices` (the layout pmap takes and Brax's `_unpmap` reads shard 0 of)."""
    mesh = jax.sharding.Mesh(np.asarray(devices), ("i",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("i"))
    return jax.tree.map(lambda x: jax.device_put(jnp.stack([jnp.asarray(x)] * len(devices)), sharding), tree)


@contextlib.contextmanager
def installed():
    if hasattr(jax, "device_put_replicated"):  # an older JAX still has it
        yield
        return
    with swapped(jax, "device_put_replicated", device_put_replicated):
        yield
