"""Brax PPO with the flags of Isaac Lab's train scripts (Isaac Lab itself has no Brax script). Several processes run
under jax.distributed, started by the JAX launcher, one process per GPU:

    python -m fleetlab.distributed.jax_launch --nnodes=1 --nproc_per_node=2 \
        scripts/reinforcement_learning/brax/train.py \
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
    script_main("brax", play=False)
