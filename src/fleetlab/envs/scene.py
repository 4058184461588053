"""The scene: the MJCF's facts that terms need (names, ids, joint addresses, limits, the default state), read once
when the env is built, and the resolution of the names a term's params give (`Joints(".*_hip")`) to ids."""

from __future__ import annotations

import dataclasses
import re

import mujoco
import numpy as np

from fleetlab.envs.cfg import Entity, SceneCfg
from fleetlab.errors import FleetlabError
from fleetlab.terrains import HeightField, Terrain
from fleetlab.terrains.mjcf import heights_of

_OBJ = {"joint": mujoco.mjtObj.mjOBJ_JOINT, "body": mujoco.mjtObj.mjOBJ_BODY, "geom": mujoco.mjtObj.mjOBJ_GEOM,
        "site": mujoco.mjtObj.mjOBJ_SITE, "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR}
_COUNT = {"joint": "njnt", "body": "nbody", "geom": "ngeom", "site": "nsite", "actuator": "nu"}
_ONE_DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclasses.dataclass(frozen=True)
class Selected:
    """The parts an Entity names: their names and ids in model order; for joints also their qpos and qvel
    addresses (numpy, so a term indexes with constants)."""

    kind: str
    names: tuple
    ids: np.ndarray
    qpos: np.ndarray | None = None
    dof: np.ndarray | None = None
    sensor: str = ""  # for bodies of a contact sensor: ids index its readings

    def __len__(self) -> int:
        return len(self.ids)


class Scene:
    """One task's model and what follows from it. `where` in errors names the task (and the term)."""

    def __init__(self, cfg: SceneCfg, mj_model: mujoco.MjModel, task_id: str, decimation: int,
                 terrain: Terrain | None = None):
        self.cfg = cfg
        # generated ground (cfg.terrain): the tiles' env origins, and the height under any point as MuJoCo has it
        self.terrain = terrain
        self.height_field = HeightField(*heights_of(mj_model, cfg.terrain.floor_geom)) if terrain else None
        self.mj_model = mj_model
        self.task_id = task_id
        self.dt = float(mj_model.opt.timestep) * decimation  # the policy step
        m = mj_model
        self.has_free_root = m.njnt > 0 and m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
        self.sensor_bodies: dict[str, Selected] = {}  # filled by the sensor manager
        self.default_qpos = self._default_qpos()

    def name(self, kind: str, index: int) -> str:
        return mujoco.mj_id2name(self.mj_model, _OBJ[kind], int(index)) or ""

    def _default_qpos(self) -> np.ndarray:
        qpos = self.mj_model.qpos0.copy()
        if self.cfg.init_root_pos is not None:
            if not self.has_free_root:
                raise FleetlabError(f"task '{self.task_id}': scene.init_root_pos is set, but the MJCF's first joint "
                                    "is not a free joint")
            qpos[0:3] = self.cfg.init_root_pos
        if self.cfg.default_joint_pos:
            joints = self.select(Entity("joint", tuple(self.cfg.default_joint_pos)), "scene.default_joint_pos")
            for name, adr in zip(joints.names, joints.qpos):
                qpos[adr] = next(v for pattern, v in self.cfg.default_joint_pos.items() if re.fullmatch(pattern, name))
        return qpos

    def select(self, entity: Entity, where: str) -> Selected:
        """The parts `entity` names, or a one-line error naming the task, `where` (the term) and the missing name."""
        if entity.sensor:
            return self._select_sensor_bodies(entity, where)
        if entity.kind not in _OBJ:
            raise FleetlabError(f"task '{self.task_id}', {where}: unknown entity kind '{entity.kind}' "
                                f"(one of {', '.join(_OBJ)})")
        candidates = [(i, self.name(entity.kind, i)) for i in range(getattr(self.mj_model, _COUNT[entity.kind]))]
        if entity.kind == "joint":
            candidates = [(i, n) for i, n in candidates if int(self.mj_model.jnt_type[i]) in _ONE_DOF]
        ids = self._match(entity, candidates, where, f"{entity.kind}s")
        names = tuple(self.name(entity.kind, i) for i in ids)
        if entity.kind != "joint":
            return Selected(entity.kind, names, np.asarray(ids, np.int32))
        return Selected("joint", names, np.asarray(ids, np.int32), qpos=self.mj_model.jnt_qposadr[ids].copy(),
                        dof=self.mj_model.jnt_dofadr[ids].copy())

    def _select_sensor_bodies(self, entity: Entity, where: str) -> Selected:
        bodies = self.sensor_bodies.get(entity.sensor)
        if bodies is None:
            raise FleetlabError(f"task '{self.task_id}', {where}: no contact sensor '{entity.sensor}' "
                                f"(sensors: {', '.join(self.sensor_bodies) or 'none'})")
        index = self._match(entity, list(enumerate(bodies.names)), where, f"bodies of sensor '{entity.sensor}'")
        return Selected("body", tuple(bodies.names[i] for i in index), np.asarray(index, np.int32),
                        sensor=entity.sensor)

    def _match(self, entity: Entity, candidates: list, where: str, what: str) -> list[int]:
        names = (entity.names,) if isinstance(entity.names, str) else tuple(entity.names)
        ids = []
        for pattern in names:
            try:
                found = [i for i, n in candidates if re.fullmatch(pattern, n)]
            except re.error as err:
                raise FleetlabError(f"task '{self.task_id}', {where}: '{pattern}' is not a regular expression "
                                    f"({err})") from None
            if not found:
                known = ", ".join(n for _, n in candidates[:12]) + (", ..." if len(candidates) > 12 else "")
                raise FleetlabError(f"task '{self.task_id}', {where}: no {what} named '{pattern}' in "
                                    f"{self.cfg.xml_path} (it has: {known or 'none'})")
            ids += [i for i in found if i not in ids]
        return ids

    def actuators_of(self, joints: Selected, where: str) -> np.ndarray:
        """The actuators that drive `joints`, in actuator order; every joint must have one."""
        m = self.mj_model
        on_joint = [a for a in range(m.nu) if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]
        ids = [a for a in on_joint if m.actuator_trnid[a, 0] in set(joints.ids.tolist())]
        driven = {int(m.actuator_trnid[a, 0]) for a in ids}
        missing = [n for n, j in zip(joints.names, joints.ids) if int(j) not in driven]
        if missing:
            raise FleetlabError(f"task '{self.task_id}', {where}: joint(s) {', '.join(missing)} have no actuator in "
                                f"{self.cfg.xml_path}")
        return np.asarray(ids, np.int32)


__all__ = ["Scene", "Selected"]
