"""MuJoCo MJX physics: load an MJCF model onto one JAX device and step it with the decimation inside one call."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import os
import warnings

import jax
import mujoco
import numpy as np

from fleetlab.errors import FleetlabError
from fleetlab.sim.options import IMPLS, PhysicsOptions


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

# Contact and constraint buffers of MuJoCo Warp, per env. Warp allocates them up front (JAX sizes them from the model
# itself); a step that needs more sets Data.overflow, which VecEnv turns into an error.
WARP_CONTACTS_PER_ENV = 64
WARP_CONSTRAINTS_PER_ENV = 512
# MuJoCo Warp's Data.overflow bits that mean a buffer was too small (contacts, constraints, collision scratch): the
# step is wrong. Bits 9 and 10 (solver and line-search iteration limits) are not among them: a fixed iteration count
# is a model setting (the Ant and Humanoid MJCFs use 4), as in the JAX implementation.
WARP_BUFFER_OVERFLOW_BITS = (1 << 9) - 1


# The MuJoCo Warp modules every step runs. Warp compiles a module when one of its kernels is first launched, one
# module after another; load_physics compiles these ahead, on all cores (H200, Humanoid: a cold first step of 72 s
# becomes 48 s). The rest are kernels MuJoCo Warp builds from the model's sizes inside the first step (MJX's ffi
# module too gets its kernels then), which only its private factories could build ahead.
# PhysicsOptions.preload picks others ("all", "none", module names), for measurements.
WARP_STEP_MODULES = tuple(f"mujoco.mjx.third_party.mujoco_warp._src.{name}" for name in
                          ("smooth", "forward", "passive", "constraint", "solver", "support"))


def warp_installed() -> bool:
    return importlib.util.find_spec("warp") is not None


def resolve_impl(impl: str, device: str) -> str:
    """`auto`: MuJoCo Warp on a CUDA device when warp-lang is installed (about 3x the JAX implementation's steps/s
    on contact-rich robots, and ~1 s compiles instead of ~30 s), the JAX implementation otherwise (faster on CPU)."""
    if impl not in IMPLS:
        raise FleetlabError(f"unknown physics impl '{impl}': choose one of {IMPLS}")
    if impl == "auto":
        return "warp" if device.startswith("cuda") and warp_installed() else "jax"
    if impl == "warp" and not warp_installed():
        raise FleetlabError("physics impl 'warp' needs warp-lang: pip install 'fleetlab[warp]' (warp-lang==1.18.0, "
                            "the version mujoco-mjx 3.17 pins), or use --physics_impl jax")
    return impl


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
            f"device '{device}' asks for a GPU but JAX has no GPU backend ({err}); install jax[cuda13] or use "
            "--device cpu"
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
    options: PhysicsOptions = PhysicsOptions()

    @property
    def dt(self) -> float:
        """The policy step: physics timestep times decimation."""
        return float(self.mj_model.opt.timestep) * self.decimation

    def data(self, qpos: jax.Array, qvel: jax.Array) -> mjx.Data:
        """A full Data for one env from the small state we carry between calls (fewer arrays cross jit)."""
        return self.template.replace(qpos=qpos, qvel=qvel)

    def advance(self, data: mjx.Data, ctrl: jax.Array, model: mjx.Model | None = None) -> mjx.Data:
        """`decimation` physics steps with `ctrl` held. `model`: this env's own model (randomized fields), else the
        shared one; both implementations take per-env model fields under vmap."""
        model = self.model if model is None else model
        data = data.replace(ctrl=ctrl)
        every = self.options.rne_every_substep
        for substep in range(self.decimation):  # unrolled: decimation is small and static
            last = substep == self.decimation - 1
            data = mjx.step(model if last or every else _without_body_forces(model), data)
        return data

    def for_one_xla_loop(self) -> "Physics":
        """This physics for a caller that steps it inside one compiled XLA loop (Brax's fused rollout): MJX's
        default graph mode (WARP) instead of load_physics' WARP_STAGED. There the step's buffers keep their
        addresses from one iteration to the next, so Warp replays its captured CUDA graph without staging copies
        (H200, Humanoid, 16384 envs: brax trains at 2.02M steps/s against 1.51M, humprobe in
        benchmarks/results/2026-12-04_h200_humanoid). A VecEnv step, called from Python, keeps WARP_STAGED."""
        if self.impl != "warp" or self.device.platform == "cpu" or self.options.graph_mode != "auto":
            return self
        import warp

        return dataclasses.replace(self, model=_with_warp_opt(self.model, graph_mode=warp.JaxCallableGraphMode.WARP))

    def with_body_forces(self) -> "Physics":
        """This physics with MuJoCo Warp computing cfrc_int/cfrc_ext in its step (the JAX implementation computes
        them in body_forces)."""
        if self.impl != "warp":
            return self
        return dataclasses.replace(self, model=_with_warp_opt(self.model, run_rne_postconstraint=True))

    def forward(self, data: mjx.Data) -> mjx.Data:
        return mjx.forward(self.model, data)

    def overflow(self, data: mjx.Data) -> jax.Array:
        """Non-zero when MuJoCo Warp ran out of a contact or constraint buffer in the step that made `data` (the
        JAX implementation sizes its buffers from the model and never does)."""
        if self.impl != "warp":
            return jax.numpy.zeros((), jax.numpy.int32)
        return (data._impl.overflow & WARP_BUFFER_OVERFLOW_BITS).astype(jax.numpy.int32)

    def body_forces(self, data: mjx.Data) -> mjx.Data:
        """data with cfrc_int/cfrc_ext filled (MuJoCo's mj_rnePostConstraint), from the constraint forces of the
        step that made `data`. MuJoCo Warp computes them inside each step when the model asks for it
        (Physics.with_body_forces sets opt.run_rne_postconstraint); MJX's JAX implementation has the function
        but does not export it (3.17)."""
        if self.impl == "warp":
            return data
        from mujoco.mjx._src.smooth import rne_postconstraint

        return rne_postconstraint(self.model, data)


def warp_overflow_error(when: str, bits: int | None = None) -> FleetlabError:
    bits_text = f" (overflow bits {bits})" if bits is not None else ""
    return FleetlabError(
        f"MuJoCo Warp ran out of its contact or constraint buffers {when}{bits_text}: the steps since "
        "are wrong. Raise the task's physics.contacts_per_env / constraints_per_env (e.g. "
        f"--physics_constraints_per_env 1024; defaults {WARP_CONTACTS_PER_ENV} and {WARP_CONSTRAINTS_PER_ENV}), "
        "or use --physics_impl jax")


def _without_body_forces(model: mjx.Model) -> mjx.Model:
    """The model without MuJoCo Warp's opt.run_rne_postconstraint: the body forces of a substep before the last are
    overwritten unread, and computing them costs a pass over the bodies per substep
    (PhysicsOptions.rne_every_substep keeps them, for measurements)."""
    if getattr(model.opt._impl, "run_rne_postconstraint", False) is not True:
        return model
    return _with_warp_opt(model, run_rne_postconstraint=False)


def _with_warp_opt(model: mjx.Model, **changes) -> mjx.Model:
    """The model with MuJoCo Warp's own options (model.opt._impl) changed."""
    return model.replace(opt=model.opt.replace(_impl=model.opt._impl.replace(**changes)))


def external_force(data: mjx.Data, bodies) -> jax.Array:
    """The 3D force the world applies to each body through contacts, MuJoCo's cfrc_ext[:, 3:] (world frame); filled
    by Physics.body_forces."""
    return data._impl.cfrc_ext[bodies, 3:]


def incoming_wrench(data: mjx.Data, bodies) -> jax.Array:
    """The 6D wrench (torque, force) each body gets from its parent, MuJoCo's cfrc_int (world orientation, about the
    subtree centre of mass); filled by Physics.body_forces. MJX 3.17 keeps it in the JAX implementation's fields."""
    return data._impl.cfrc_int[bodies]


def _preload_warp_modules(jax_device, names: str) -> None:
    """Compile (or load from Warp's kernel cache) the modules `names` names ("step": WARP_STEP_MODULES) on one
    thread per core."""
    import warp

    names = ",".join(WARP_STEP_MODULES) if names == "step" else names
    if names == "none":
        return
    device = "cpu" if jax_device.platform == "cpu" else f"cuda:{jax_device.id}"
    if names == "all":
        warp.force_load(device=device, max_workers=os.cpu_count())
        return
    modules = [warp.get_module(name) for name in names.split(",")]
    warp.force_load(device=device, modules=modules, max_workers=os.cpu_count())


# Bytes an env takes beyond one MjData's arrays, as a multiple of them: JAX's working copies inside the jitted step
# (vmapped intermediates, the donated state, the reset branch computed for every env) and the libraries' rollout
# buffers. Loose: on CPU a Cartpole of 16384 envs grew the process by ~17 KiB an env, compiles included, against
# an estimate of 29 KiB (Ant 149, Humanoid 299, Go1 205); meant to refuse the impossible
# (a billion envs) up front, not to predict the last megabyte.
MEMORY_FACTOR = 8


def bytes_per_env(mj_model) -> int:
    data = mujoco.MjData(mj_model)
    arrays = sum(getattr(data, name).nbytes for name in dir(data)
                 if not name.startswith("_") and isinstance(getattr(data, name, None), np.ndarray))
    return MEMORY_FACTOR * arrays


def check_memory(mj_model, num_envs: int, jax_device) -> None:
    """Refuse a num_envs whose envs cannot fit the device's free memory, before anything is allocated."""
    need = num_envs * bytes_per_env(mj_model)
    if jax_device.platform == "cpu":
        import psutil

        free = psutil.virtual_memory().available
    else:
        stats = jax_device.memory_stats() or {}
        free = stats.get("bytes_limit", 0) - stats.get("bytes_in_use", 0) if stats else None
    if free is not None and need > free:
        raise FleetlabError(f"--num_envs {num_envs} needs about {need / 2**30:.1f} GiB on {jax_device} "
                            f"(~{need // num_envs // 1024} KiB an env), but {free / 2**30:.1f} GiB is free: "
                            f"use at most ~{max(1, int(free // (need // num_envs)))} envs per process")


def load_model(xml_path: str, where: str = "", edit=None) -> mujoco.MjModel:
    """The MJCF compiled by MuJoCo, or a one-line error with MuJoCo's message (`where`: the task, for the error).
    `edit(spec)` changes the parsed MjSpec before it compiles (a terrain in place of the floor plane)."""
    prefix = f"{where}: " if where else ""
    if not isinstance(xml_path, str) or not os.path.isfile(xml_path):
        raise FleetlabError(f"{prefix}MJCF file '{xml_path}' does not exist: point the scene's xml_path at an "
                            ".xml file")
    try:
        if edit is None:
            return mujoco.MjModel.from_xml_path(xml_path)
        spec = mujoco.MjSpec.from_file(xml_path)
        edit(spec)
        return spec.compile()
    except ValueError as err:  # MuJoCo's parse and compile errors: a mistake in the user's MJCF
        raise FleetlabError(f"{prefix}MuJoCo cannot load '{xml_path}': {' '.join(str(err).split())}") from None


def load_physics(model: str | mujoco.MjModel, *, sim_dt: float, decimation: int, device: str = "cpu", impl: str = "jax",
                 num_envs: int = 1, options: PhysicsOptions = PhysicsOptions(), where: str = "") -> Physics:
    """The model (an MJCF path, or a compiled MjModel) on `device` with implementation `impl` ("auto", "jax",
    "warp"; it wins over options.impl) and MuJoCo Warp's `options`. Warp's buffers: options.contacts_per_env times
    `num_envs` contacts (shared by all envs) and options.constraints_per_env constraint rows per env (None:
    WARP_CONTACTS_PER_ENV, WARP_CONSTRAINTS_PER_ENV).
    Physics.with_body_forces makes Warp compute cfrc_int, for an env whose terms read it."""
    impl = resolve_impl(impl, device)
    if decimation < 1:
        raise FleetlabError(f"decimation must be >= 1, got {decimation}")
    mj_model = load_model(model, where) if isinstance(model, str) else model
    mj_model.opt.timestep = sim_dt
    jax_device = jax_device_for(device)
    check_memory(mj_model, num_envs, jax_device)
    try:
        model = mjx.put_model(mj_model, device=jax_device, impl=impl)
    except NotImplementedError as err:  # MJX's own list of what each implementation supports
        integrator = mujoco.mjtIntegrator(mj_model.opt.integrator).name
        what = f'integrator="{integrator.removeprefix("mjINT_").lower()}"' if integrator in str(err) else str(err)
        raise FleetlabError(f"{where + ': ' if where else ''}MJX's {impl} implementation does not support the MJCF's "
                            f"{what}: use <option integrator=\"implicitfast\"> (or Euler, RK4)") from None
    if impl == "warp":
        # MuJoCo Warp prints a warning on every step that hits an overflow, iteration limits included; fleetlab
        # raises its own error on buffer overflows instead (VecEnv), so the prints are off.
        warp_opt = model.opt._impl.replace(warn_overflow=0, run_rne_postconstraint=False)
        # MJX's default graph mode (WARP) replays a captured CUDA graph only for the same buffer addresses; in
        # training they move, and Warp re-captures (H200, Humanoid, 16384 envs: rollout 269 ms per iteration).
        # WARP_STAGED captures once on staging buffers: 193 ms, and 65.5M Humanoid steps in 95 s instead of 142 s
        # (benchmarks/results/2026-12-03_h200_warp). JAX's CPU FFI has no graphs: the CPU keeps MJX's default.
        # options.graph_mode (WARP, WARP_STAGED, WARP_STAGED_EX, JAX, NONE) overrides, for measurements.
        graph_mode = options.graph_mode if options.graph_mode != "auto" else ("WARP_STAGED" if device != "cpu" else "")
        if graph_mode:
            import warp

            warp_opt = warp_opt.replace(graph_mode=getattr(warp.JaxCallableGraphMode, graph_mode))
        model = model.replace(opt=model.opt.replace(_impl=warp_opt))
        _preload_warp_modules(jax_device, options.preload)
        # Oversized buffers cost time: Warp's constraint and solver kernels run over every row of the buffer (H200,
        # Humanoid, 16384 envs: 1.51M env-steps/s with 64 contacts and 512 rows per env, 2.11M with 16 and 128).
        contacts = options.contacts_per_env or WARP_CONTACTS_PER_ENV
        constraints = options.constraints_per_env or WARP_CONSTRAINTS_PER_ENV
        template = mjx.make_data(mj_model, device=jax_device, impl=impl, naconmax=contacts * num_envs,
                                 njmax=constraints)
    else:
        template = mjx.make_data(model, device=jax_device, impl=impl)
    template = jax.device_put(template, jax_device)
    return Physics(mj_model=mj_model, model=model, template=template, decimation=decimation, device=jax_device,
                   impl=impl, options=options)


__all__ = ["IMPLS", "Physics", "PhysicsOptions", "external_force", "incoming_wrench", "jax_device_for", "load_model",
           "load_physics", "resolve_impl", "warp_overflow_error"]
