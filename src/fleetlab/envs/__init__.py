from fleetlab.envs.core import Env, State, Task
from fleetlab.envs.registry import (
    TaskEntry,
    import_tasks,
    list_tasks,
    load_agent_yaml,
    make,
    register,
    resolve,
)
from fleetlab.envs.vec_env import VecEnv, to_jax, to_torch

__all__ = ["Env", "State", "Task", "TaskEntry", "VecEnv", "import_tasks", "list_tasks", "load_agent_yaml", "make",
           "register", "resolve", "to_jax", "to_torch"]
