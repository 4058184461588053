"""Run the fleetlab CLI with the given arguments and report, on stdout, what the process was doing when some modules
were first imported:
- "collector on at the import of <module>: B" (gc.isenabled()) for mujoco (every run's start-up), brax's PPO trainer
  (imported in BraxSession.learn(), just before its trace) and torch;
- at the end: "collector on after: B, objects frozen: N" (gc.get_freeze_count(): how many objects the garbage
  collector skips) and, as the last line, the name of the thread that first imported torch ("none" if nothing did).
A real run of the command-line program; only an import hook (a sys.meta_path finder that finds nothing) is added,
to watch."""

import gc
import importlib.abc
import sys
import threading

WATCHED = ("mujoco", "brax.training.agents.ppo.train", "torch")
seen = set()
first = []


class WatchImports(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in WATCHED and name not in seen:
            seen.add(name)
            print(f"collector on at the import of {name}: {gc.isenabled()}", flush=True)
            if name == "torch":
                first.append(threading.current_thread().name)
        return None  # the normal finders do the import


sys.meta_path.insert(0, WatchImports())
from fleetlab.cli import main  # noqa: E402

code = main(sys.argv[1:])
print(f"collector on after: {gc.isenabled()}, objects frozen: {gc.get_freeze_count()}", flush=True)
print(f"first torch import: {first[0] if first else 'none'}", flush=True)
sys.exit(code)
