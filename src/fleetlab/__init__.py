"""fleetlab: GPU-vectorized MuJoCo MJX robot envs and multi-GPU RL training for rsl_rl, rl_games, skrl and Brax.

Importing fleetlab changes no environment variable, signal handler or stream: the CLI sets up its process in
fleetlab/process.py. It registers the task ids with gymnasium (`gymnasium.make("Isaac-Cartpole-v0")`)."""

__version__ = "0.1.0"

from fleetlab.gymnasium_ids import register_ids as _register_gymnasium_ids  # noqa: E402

_register_gymnasium_ids()
