"""Isaac Lab's scripts/reinforcement_learning/rl_games/play.py: load a checkpoint, report the return, export, video.

    python scripts/reinforcement_learning/rl_games/play.py --task=Isaac-Cartpole-v0 --headless \
        [--checkpoint PATH] [--video]
"""

import os
import sys

try:
    import fleetlab  # noqa: F401
except ImportError:  # a source checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src"))

from fleetlab.cli import script_main

if __name__ == "__main__":
    script_main("rl_games", play=True)
