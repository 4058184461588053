"""Actions: the policy's action vector, split among the action terms in config order, turned into MuJoCo's ctrl.
Every actuator of the model must be driven by exactly one term; the action size is the number of actuators."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from fleetlab.envs.cfg import JointEffortAction, JointPositionAction
from fleetlab.envs.scene import Scene
from fleetlab.errors import FleetlabError


class ActionManager:
    def __init__(self, cfg: dict, scene: Scene):
        self.scene = scene
        where = f"task '{scene.task_id}'"
        if not cfg:
            raise FleetlabError(f"{where}: the config has no action terms (actions={{...}})")
        self._terms = []  # (name, term cfg, actuator ids, offset or None)
        start = 0
        for name, term in cfg.items():
            if not isinstance(term, (JointEffortAction, JointPositionAction)):
                raise FleetlabError(f"{where}, action term '{name}': {term!r} is not a JointEffortAction or "
                                    "JointPositionAction")
            joints = scene.select(term.joints, f"action term '{name}'")
            actuators = scene.actuators_of(joints, f"action term '{name}'")
            offset = None
            if isinstance(term, JointPositionAction):
                # the default position of each actuator's joint, in actuator order
                by_joint = dict(zip(joints.ids.tolist(), joints.qpos.tolist()))
                adr = [by_joint[int(scene.mj_model.actuator_trnid[a, 0])] for a in actuators]
                offset = np.asarray(scene.default_qpos[adr] if term.use_default_offset else np.zeros(len(adr)),
                                    np.float32)
                if term.stiffness is not None:
                    self._make_pd(actuators, term.stiffness, term.damping)
            self._terms.append((name, term, actuators, offset, slice(start, start + len(actuators))))
            start += len(actuators)
        self.num_actions = start
        driven = np.concatenate([t[2] for t in self._terms])
        nu = scene.mj_model.nu
        if len(driven) != nu or len(set(driven.tolist())) != nu:
            names = [scene.name("actuator", a) or str(a) for a in range(nu) if a not in set(driven.tolist())]
            extra = f"; not driven: {', '.join(names)}" if names else "; some actuator is driven twice"
            raise FleetlabError(f"{where}: the action terms drive {len(driven)} actuators, {scene.cfg.xml_path} has "
                                f"{nu}{extra}")
        self._in_order = np.array_equal(driven, np.arange(nu))

    def _make_pd(self, actuators: np.ndarray, kp: float, kd: float) -> None:
        """MuJoCo's affine actuator as an explicit PD on an absolute target: force = kp ctrl - kp q - kd qdot."""
        m = self.scene.mj_model
        m.actuator_gaintype[actuators] = mujoco.mjtGain.mjGAIN_FIXED
        m.actuator_biastype[actuators] = mujoco.mjtBias.mjBIAS_AFFINE
        m.actuator_gainprm[actuators, :] = 0.0
        m.actuator_gainprm[actuators, 0] = kp
        m.actuator_biasprm[actuators, :] = 0.0
        m.actuator_biasprm[actuators, 1] = -kp
        m.actuator_biasprm[actuators, 2] = -kd
        m.actuator_ctrllimited[actuators] = 0

    def ctrl(self, action: jax.Array) -> jax.Array:
        """MuJoCo's ctrl for one env's policy action."""
        parts = []
        for _, term, _, offset, span in self._terms:
            a = action if len(self._terms) == 1 else action[span]
            parts.append(a * term.scale if offset is None else offset + a * term.scale)
        if self._in_order:
            return parts[0] if len(parts) == 1 else jnp.concatenate(parts)
        ctrl = jnp.zeros(self.scene.mj_model.nu, jnp.float32)
        for (_, _, actuators, _, _), part in zip(self._terms, parts):
            ctrl = ctrl.at[actuators].set(part)
        return ctrl


__all__ = ["ActionManager"]
