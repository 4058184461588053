"""Sensors. The contact sensor (Isaac Lab's ContactSensor): for each of its bodies, the net force the world applies
through contacts (MuJoCo's cfrc_ext, world frame, after the policy step's last physics step), contact where its
norm exceeds the threshold, and the times each body has been in the air and in contact."""

from __future__ import annotations

import jax.numpy as jnp

from fleetlab.envs.cfg import ContactSensorCfg
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError
from fleetlab.sim.mjx import external_force

TIMES = ("air_time", "last_air_time", "contact_time", "last_contact_time")


class SensorManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        self._sensors = {}
        for name, sensor in cfg.items():
            if not isinstance(sensor, ContactSensorCfg):
                raise FleetlabError(f"task '{scene.task_id}', sensor '{name}': {sensor!r} is not a ContactSensorCfg")
            bodies = scene.select(sensor.bodies, f"sensor '{name}'")
            scene.sensor_bodies[name] = bodies  # what SensorBodies(name, ...) params select from
            self._sensors[name] = (sensor, bodies)

    def reset(self) -> tuple[dict, dict]:
        """(state, readings) at an episode start: no contact, no time in the air."""
        state, readings = {}, {}
        for name, (sensor, bodies) in self._sensors.items():
            zeros = jnp.zeros(len(bodies), jnp.float32)
            state[name] = {t: zeros for t in TIMES} if sensor.track_air_time else {}
            readings[name] = {"force": jnp.zeros((len(bodies), 3), jnp.float32), "contact": zeros > 0,
                              "first_contact": zeros > 0, "first_air": zeros > 0, **state[name]}
        return state, readings

    def update(self, data, state: dict) -> tuple[dict, dict]:
        """(state, readings) after a policy step."""
        dt = self.scene.dt
        new_state, readings = {}, {}
        for name, (sensor, bodies) in self._sensors.items():
            force = external_force(data, bodies.ids)
            contact = jnp.linalg.norm(force, axis=-1) > sensor.threshold
            reading = {"force": force, "contact": contact}
            if sensor.track_air_time:
                s = state[name]
                first_contact = contact & (s["air_time"] > 0)
                first_air = ~contact & (s["contact_time"] > 0)
                new = {
                    "last_air_time": jnp.where(first_contact, s["air_time"], s["last_air_time"]),
                    "air_time": jnp.where(contact, 0.0, s["air_time"] + dt),
                    "last_contact_time": jnp.where(first_air, s["contact_time"], s["last_contact_time"]),
                    "contact_time": jnp.where(contact, s["contact_time"] + dt, 0.0),
                }
                reading.update(new, first_contact=first_contact, first_air=first_air)
                new_state[name] = new
            else:
                new_state[name] = {}
            readings[name] = reading
        return new_state, readings

    @property
    def reads_body_forces(self) -> bool:
        return bool(self._sensors)


__all__ = ["SensorManager"]
