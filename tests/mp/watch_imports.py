"""Run the fleetlab CLI with the given arguments and report, on stdout, what the process was doing when some modules
were first imported:
- "collector on at the import of <module>: B" (gc.isenabled()) for mujoco (every run's start-up), brax's PPO trainer
  (imported in BraxSession.learn(), just before its trace) and torch;
- when torch's import begins: "torch import begins", "switch interval during the import: S" and "objects frozen: N"
  (gc.get_freeze_count(): how many objects the garbage collector skips);
- at the end: "switch interval after: S", "collector on after: B, objects frozen: N" and, as the last line, the name
  of the thread that first imported torch ("none" if nothing did).
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
                print("torch import begins", flush=True)
                print(f"switch interval during the import: {sys.getswitchinterval()}", flush=True)
                print(f"objects frozen: {gc.get_freeze_count()}", flush=True)
        return None  # the normal finders do the import


sys.meta_path.insert(0, WatchImports())
from fleetlab.cli import main  # noqa: E402

code = main(sys.argv[1:])
print(f"switch interval after: {sys.getswitchinterval()}", flush=True)
print(f"collector on after: {gc.isenabled()}, objects frozen: {gc.get_freeze_count()}", flush=True)
print(f"first torch import: {first[0] if first else 'none'}", flush=True)
sys.exit(code)
