"""fleetlab's own task ids as gymnasium ids, registered on `import fleetlab` (as Isaac Lab's ids are on importing its
tasks package), without importing JAX or any task: the entry point is a string that gymnasium resolves only in
gymnasium.make, and fleetlab.envs then finds the task through the `fleetlab.tasks` entry point group.
tests/test_gymnasium.py checks that this list is exactly the ids and aliases fleetlab's tasks register."""

from __future__ import annotations

IDS = (
    "Fleet-Cartpole-v0", "Isaac-Cartpole-v0",
    "Fleet-Cartpole-Direct-v0", "Isaac-Cartpole-Direct-v0",
    "Fleet-Ant-v0", "Isaac-Ant-v0",
    "Fleet-Humanoid-v0", "Isaac-Humanoid-v0",
    "Fleet-Go1-Flat-v0", "Isaac-Velocity-Flat-Unitree-Go1-v0",
    "Fleet-Go1-Flat-Play-v0", "Isaac-Velocity-Flat-Unitree-Go1-Play-v0",
    "Fleet-Go1-Rough-v0", "Isaac-Velocity-Rough-Unitree-Go1-v0",
    "Fleet-Go1-Rough-Play-v0", "Isaac-Velocity-Rough-Unitree-Go1-Play-v0",
)


def register_ids() -> None:
    import gymnasium

    for name in IDS:
        if name not in gymnasium.registry:
            gymnasium.register(id=name, entry_point="fleetlab.envs.registry:make", kwargs={"task_id": name},
                               disable_env_checker=True, order_enforce=False)
