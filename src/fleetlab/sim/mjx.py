"""MuJoCo MJX physics: load an MJCF model onto one JAX device and step it with the decimation inside one call."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import warnings

import jax
import mujoco

from fleetlab.errors import FleetlabError


def _import_mjx():
    """`from mujoco import mjx`, without the lines its import-time probe prints when MuJoCo Warp is not installed
    ("Failed to import warp: No module named 'warp'"): that is the normal CPU set-up, not something to act on. Any
    other line it prints (Warp installed but failing to load) is passed on."""
    probe = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(probe):
        warnings.simplefilter("ignore")
        from mujoco import mjx
    for line in probe.getvalue().splitlines():
        if "No module named 'warp'" not in line:
            print(line, flush=True)
    return mjx


mjx = _import_mjx()

IMPLS = ("jax", "warp")


def jax_device_for(device: str) -> jax.Device:
    """The JAX device that is the same physical device as the torch device string ("cpu", "cuda:K")."""
    if device == "cpu":
        return jax.local_devices(backend="cpu")[0]  # under jax.distributed, devices() lists other processes too
    if not device.startswith("cuda"):
        raise FleetlabError(f"unknown device '{device}': use 'cpu' or 'cuda:K'")
    index = int(device.split(":")[1]) if ":" in device else 0
    try:
        gpus = jax.local_devices(backend="gpu")
    except RuntimeError as err:
        raise FleetlabError(
            f"device '{device}' asks for a GPU but JAX has no GPU backend ({err}); install jax[cuda13] or use --device cpu"
        ) from None
    # local_hardware_id is the CUDA ordinal inside CUDA_VISIBLE_DEVICES, the same numbering torch's cuda:K uses,
    # also when jax.distributed gave this process only one of the local GPUs.
    for gpu in gpus:
        if getattr(gpu, "local_hardware_id", gpu.id) == index:
            return gpu
    raise FleetlabError(f"device '{device}': JAX sees no such GPU (it sees {[str(g) for g in gpus]})")


@dataclasses.dataclass(frozen=True)
class Physics:
    """One MJX model on one device. `advance` is pure: it applies ctrl and takes `decimation` physics steps."""

    mj_model: mujoco.MjModel
    model: mjx.Model
    template: mjx.Data  # a full Data at the initial state; per-env state overrides only qpos/qvel
    decimation: int
    device: jax.Device
    impl: str = "jax"

    @property
    def dt(self) -> float:
        """The policy step: physics timestep times decimation."""
        return float(self.mj_model.opt.timestep) * self.decimation

    def data(self, qpos: jax.Array, qvel: jax.Array) -> mjx.Data:
        """A full Data for one env from the small state we carry between calls (fewer arrays cross jit)."""
        return self.template.replace(qpos=qpos, qvel=qvel)

    def advance(self, data: mjx.Data, ctrl: jax.Array) -> mjx.Data:
        data = data.replace(ctrl=ctrl)
        for _ in range(self.decimation):  # unrolled: decimation is small and static
            data = mjx.step(self.model, data)
        return data

    def forward(self, data: mjx.Data) -> mjx.Data:
        return mjx.forward(self.model, data)

    def body_forces(self, data: mjx.Data) -> mjx.Data:
        """data with cfrc_int/cfrc_ext filled (MuJoCo's mj_rnePostConstraint), from the constraint forces of the
        step that made `data`. MJX has it only in its JAX implementation (Env refuses other impls for tasks that
        need it) and does not export it (3.17)."""
        from mujoco.mjx._src.smooth import rne_postconstraint

        return rne_postconstraint(self.model, data)


def incoming_wrench(data: mjx.Data, bodies) -> jax.Array:
    """The 6D wrench (torque, force) each body gets from its parent, MuJoCo's cfrc_int (world orientation, about the
    subtree centre of mass); filled by Physics.body_forces. MJX 3.17 keeps it in the JAX implementation's fields."""
    return data._impl.cfrc_int[bodies]


def load_physics(xml_path: str, *, sim_dt: float, decimation: int, device: str = "cpu", impl: str = "jax") -> Physics:
    if impl not in IMPLS:
        raise FleetlabError(f"unknown physics impl '{impl}': choose one of {IMPLS}")
    if impl == "warp" and (importlib.util.find_spec("warp") is None or importlib.util.find_spec("mujoco_warp") is None):
        raise FleetlabError("impl='warp' needs MuJoCo Warp: pip install 'fleetlab[warp]' (warp-lang, mujoco-warp)")
    if decimation < 1:
        raise FleetlabError(f"decimation must be >= 1, got {decimation}")
    mj_model = mujoco.MjModel.from_xml_path(xml_path)
    mj_model.opt.timestep = sim_dt
    jax_device = jax_device_for(device)
    model = mjx.put_model(mj_model, device=jax_device, impl=impl)
    template = mjx.make_data(model, device=jax_device, impl=impl)
    template = jax.device_put(template, jax_device)
    return Physics(mj_model=mj_model, model=model, template=template, decimation=decimation, device=jax_device, impl=impl)


__all__ = ["IMPLS", "Physics", "incoming_wrench", "jax_device_for", "load_physics"]
