"""fleetlab's own tasks. Importing this package registers them; each task package follows one layout:

    <name>/__init__.py   register(TaskEntry(...)): ids, aliases, description, agent configs
    <name>/cfg.py        the config dataclass (physics rates, scales, weights, MJCF path)
    <name>/env.py        pure JAX term functions of one env, and make_task(**overrides) -> Task
    <name>/<name>.xml    the MJCF (meshes and textures beside it)
    <name>/agents/       __init__.py with rsl_rl(), rl_games(), skrl() -> fresh dicts; the YAML files they read

docs/adding_a_task.md walks through one, written in a package of its own."""

from fleetlab.tasks import ant, cartpole, go1, humanoid  # noqa: F401  (each registers its ids)
