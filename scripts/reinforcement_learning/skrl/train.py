"""Isaac Lab's scripts/reinforcement_learning/skrl/train.py, so its documented commands run verbatim:

    python -m torch.distributed.run --nnodes=1 --nproc_per_node=2 scripts/reinforcement_learning/skrl/train.py \
        --task=Isaac-Cartpole-v0 --headless --distributed
"""

import os
import sys

try:
    import fleetlab  # noqa: F401
except ImportError:  # a source checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src"))

from fleetlab.cli import script_main

if __name__ == "__main__":
    script_main("skrl", play=False)
