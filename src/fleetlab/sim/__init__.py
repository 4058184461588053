"""MJX physics (mjx.py) and its options (options.py). mjx.py, which imports JAX and MuJoCo, loads on the first use of
one of its names here: importing fleetlab.sim.options (the flags do) must not import them before the CLI has set up
its process (fleetlab/process.py)."""

__all__ = ["Physics", "jax_device_for", "load_model", "load_physics"]


def __getattr__(name: str):
    if name in __all__:
        from fleetlab.sim import mjx

        return getattr(mjx, name)
    raise AttributeError(f"module 'fleetlab.sim' has no attribute '{name}'")
