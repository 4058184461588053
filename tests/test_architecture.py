"""The layering of docs/architecture.md, checked on the source: imports point down (cli/launch/bench -> rl -> tasks
-> mdp (the term library) -> envs -> terrains -> sim, with process and distributed beneath rl), no import cycle
among fleetlab's modules, no unittest.mock in src/, and every registered library offers the whole declared
interface."""

import ast
import inspect
import os

import pytest
from conftest import REPO

SRC = os.path.join(REPO, "src", "fleetlab")
# package -> the fleetlab packages it must never import (directly or inside a function)
FORBIDDEN = {
    "distributed": ("rl", "envs", "sim", "tasks", "mdp", "cli", "launch", "bench", "process"),
    "process.py": ("rl", "envs", "sim", "tasks", "mdp", "cli", "launch", "bench"),
    "sim": ("rl", "envs", "tasks", "mdp", "cli", "launch", "bench", "terrains"),
    "terrains": ("rl", "envs", "tasks", "mdp", "cli", "launch", "bench"),
    "envs": ("rl", "tasks", "mdp", "cli", "launch", "bench"),
    "mdp": ("rl", "tasks", "cli", "launch", "bench"),
    "tasks": ("rl", "cli", "launch", "bench"),
    "rl": ("cli", "launch", "bench"),
}


def _modules():
    for folder, _, files in os.walk(SRC):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, SRC), ast.parse(open(path).read(), path)


def _imports(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_imports_point_down_the_layers():
    wrong = []
    for rel, tree in _modules():
        package = rel.split(os.sep)[0]
        for name in _imports(tree):
            for banned in FORBIDDEN.get(package, ()):
                if name == f"fleetlab.{banned}" or name.startswith(f"fleetlab.{banned}."):
                    wrong.append(f"{rel} imports {name}")
    assert not wrong, "\n".join(sorted(wrong))


def _module_name(rel: str) -> str:
    name = "fleetlab." + rel[:-3].replace(os.sep, ".")
    return name.removesuffix(".__init__")


def test_no_import_cycles():
    """An import cycle among fleetlab's modules (counting imports inside functions and under TYPE_CHECKING) means
    two modules each need the other: one of them holds something that belongs elsewhere."""
    trees = {_module_name(rel): tree for rel, tree in _modules()}

    def module_of(name: str) -> str | None:  # `fleetlab.a.b.Name` -> the module that defines it
        while name and name not in trees:
            name = name.rpartition(".")[0]
        return name or None

    def imported(tree) -> set[str]:  # `from a.b import c`: the module a.b.c if there is one, else a.b
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        return names

    graph = {m: {t for n in imported(tree) if n.startswith("fleetlab") and (t := module_of(n)) not in (None, m)}
             for m, tree in trees.items()}
    cycles, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                cycles.append(" -> ".join(path[path.index(other):] + [other]))
            elif other not in state:
                visit(other, [*path, other])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_no_unittest_mock_in_src():
    users = [rel for rel, tree in _modules() if any(n.startswith("unittest") for n in _imports(tree))]
    assert not users, users


def _declared(protocol) -> dict:
    return {n: m for n, m in vars(protocol).items() if inspect.isfunction(m) and not n.startswith("_")}


def test_every_library_offers_the_declared_interface():
    from fleetlab.rl.library import LIBRARIES, CheckpointLayout, Library, SeedPolicy, Session, library

    declared = _declared(Library)
    assert set(declared) == {"add_args", "framework", "label", "configure", "run_dir_parts", "finalize", "session"}
    for name in LIBRARIES:
        lib = library(name)
        assert lib.name == name
        assert isinstance(lib.checkpoint, CheckpointLayout) and isinstance(lib.seed, SeedPolicy), name
        for attr in ("variants", "loggers", "logs_to_wandb", "checks", "requires"):
            assert hasattr(lib, attr), f"{name} lacks {attr}"
        for method, spec in declared.items():
            ours = getattr(type(lib), method, None)
            assert ours is not None, f"{name} lacks {method}()"
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(spec).parameters), (name, method)
    assert set(_declared(Session)) == {
        "restore", "learn", "policy", "checksum", "state_checksum", "results", "export", "training_policy",
        "mirror_scalars"}


@pytest.mark.parametrize("name", ["rsl_rl", "rl_games", "skrl", "brax"])
def test_every_session_offers_the_declared_interface(name):
    """Each library package's session.py holds a class named *Session with every method of the protocol."""
    import importlib

    from fleetlab.rl.library import LIBRARIES, Session

    assert set(LIBRARIES) == {"rsl_rl", "rl_games", "skrl", "brax"}, "a new library: add its name to this test's list"
    module = f"{LIBRARIES[name]}.session"

    cls = next(c for n, c in inspect.getmembers(importlib.import_module(module), inspect.isclass)
               if n.endswith("Session") and c.__module__ == module)
    for method, spec in _declared(Session).items():
        assert list(inspect.signature(getattr(cls, method)).parameters) == list(inspect.signature(spec).parameters), (
            cls.__name__, method)


def test_library_modules_do_not_import_their_library():
    """`fleetlab train --library X` must parse flags and name run dirs with only X's extra installed."""
    import subprocess
    import sys

    code = ("import sys, fleetlab.rl.library as l\n"
            "[l.library(n) for n in l.LIBRARIES]\n"
            "print(sorted(m for m in ('rsl_rl', 'rl_games', 'skrl', 'brax') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.path.join(REPO, "src")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_importing_fleetlab_does_not_start_jax():
    """jax.distributed.initialize must run before anything starts JAX's backend, and fleetlab imports every task
    (and the RL layer) before it initializes: a module-level JAX array anywhere breaks every multi-process JAX
    run. Checked in a fresh process, with the task registry, the CLI and every library package imported."""
    import subprocess
    import sys

    code = ("import fleetlab.cli, fleetlab.tasks, fleetlab.rl.workflow\n"
            "from fleetlab.rl.library import LIBRARIES\n"
            "from jax._src import xla_bridge\n"
            "raise SystemExit(1 if xla_bridge.backends_are_initialized() else 0)")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, "importing fleetlab started JAX's backend\n" + proc.stderr[-2000:]


def test_tasks_have_no_optional_hooks():
    """Issue H: a task is a config of named terms; the hooks of the old Task are gone from the source."""
    hooks = ("extra_reset", "extra_step", "model_of", "observe_needs")
    found = [f"{rel}: {hook}" for rel, _ in _modules() for hook in hooks
             if hook in open(os.path.join(SRC, rel)).read()]
    assert not found, found
