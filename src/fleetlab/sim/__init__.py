from fleetlab.sim.mjx import Physics, jax_device_for, load_model, load_physics

__all__ = ["Physics", "jax_device_for", "load_model", "load_physics"]
