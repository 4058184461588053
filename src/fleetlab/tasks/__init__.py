"""Tasks: each is a config dataclass, an MJCF file and pure JAX functions (see envs/core.py's Task)."""
