"""Run the fleetlab CLI with the given arguments; print "torch import begins" on stdout when torch's import
begins, then "switch interval during the import: S" and "objects frozen: N" (gc.get_freeze_count(): how many
objects the garbage collector skips) and, at the end, "switch interval after: S" (Python's GIL switch interval),
and, as the last stdout line, the name of the thread that first imported torch ("none" if
nothing did).
A real run of the command-line program; only an import hook (a sys.meta_path finder that finds nothing) is added,
to watch."""

import gc
import importlib.abc
import sys
import threading

first = []


class WatchTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" and not first:
            first.append(threading.current_thread().name)
            print("torch import begins", flush=True)
            print(f"switch interval during the import: {sys.getswitchinterval()}", flush=True)
            print(f"objects frozen: {gc.get_freeze_count()}", flush=True)
        return None  # the normal finders do the import


sys.meta_path.insert(0, WatchTorch())
from fleetlab.cli import main  # noqa: E402

code = main(sys.argv[1:])
print(f"switch interval after: {sys.getswitchinterval()}", flush=True)
print(f"first torch import: {first[0] if first else 'none'}", flush=True)
sys.exit(code)
