"""Issue N, item 4: one fleetlab process with or without the two start-up workarounds, to time whole processes.

    python3 benchmarks/workaround_probe.py MODE train --library brax --task ... (fleetlab's own arguments)

MODE is a '+'-joined set of:
  asis   the code as it is
  nogc   rl/garbage_collection.py's calls do nothing, and the process ends with sys.exit (no gc.freeze first)
  torch  torch is imported first, as it would be if the brax workflow were not kept torch-free
"""

import sys

mode, argv = sys.argv[1].split("+"), sys.argv[2:]
if "torch" in mode:
    import torch  # noqa: F401

from fleetlab import cli  # noqa: E402
from fleetlab.rl import garbage_collection  # noqa: E402

if "nogc" in mode:
    garbage_collection.pause = garbage_collection.freeze_and_restart = garbage_collection.restart = lambda: None
code = cli.main(argv)
sys.exit(code) if "nogc" in mode else cli.exit_process(code)
