"""The two places where skrl offers no hook, fixed by an explicit call and only for the duration of a block."""

from __future__ import annotations

import contextlib

from fleetlab.patching import swapped


def _no_op(*_args, **_kwargs) -> None:
    return None


def import_backend(ctx, framework: str):
    """skrl's torch_backend or jax_backend module. skrl configures distributed training when it is IMPORTED:
    - torch: init_process_group("nccl") and torch.cuda.set_device under WORLD_SIZE > 1, which fail on CPU: the
      import runs inside group_made_by_run_context, where both are no-ops (RunContext made the group);
    - JAX: jax.distributed.initialize(), which RunContext already ran (a second call raises): a no-op while skrl
      is imported. skrl also calls jax.experimental.multihost_utils without importing it (AttributeError with
      several processes), so it is imported here."""
    if framework == "torch":
        from fleetlab.distributed.torch_pg import group_made_by_run_context

        with group_made_by_run_context(ctx.device):
            from fleetlab.rl.skrl import torch_backend

        return torch_backend
    import jax
    import jax.experimental.multihost_utils  # noqa: F401

    with swapped(jax.distributed, "initialize", _no_op):
        from fleetlab.rl.skrl import jax_backend
    return jax_backend


@contextlib.contextmanager
def installed(framework: str):
    """skrl-JAX builds `jax.pmap(lambda x: jax.lax.psum(x, "i"), ...)` anew on every call of reduce_parameters (each
    minibatch) and of the KL reduction (each epoch), so XLA compiles it every time (seen: 900 compiles against
    116). While training, the `jax` name inside those two skrl modules is jax_backend.CachedPmapJax, which pmaps
    the same closure-free function once."""
    if framework != "jax":
        yield
        return
    from skrl.agents.jax.ppo import ppo as skrl_ppo
    from skrl.models.jax import base as skrl_model_base

    from fleetlab.rl.skrl.jax_backend import CachedPmapJax

    cached = CachedPmapJax()
    with swapped(skrl_model_base, "jax", cached), swapped(skrl_ppo, "jax", cached):
        yield
