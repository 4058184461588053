from fleetlab.envs.core import Env, State, Task
from fleetlab.envs.registry import list_tasks, make, register, resolve
from fleetlab.envs.vec_env import VecEnv, to_jax, to_torch

__all__ = ["Env", "State", "Task", "VecEnv", "list_tasks", "make", "register", "resolve", "to_jax", "to_torch"]
