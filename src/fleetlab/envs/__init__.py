from fleetlab.envs.cfg import ManagerBasedRLEnvCfg
from fleetlab.envs.core import Env, State
from fleetlab.envs.registry import (
    TaskEntry,
    import_tasks,
    list_tasks,
    load_agent_yaml,
    make,
    register,
    resolve,
    task_cfg,
)
from fleetlab.envs.term_env import TermEnv
from fleetlab.envs.vec_env import VecEnv, to_jax, to_torch

__all__ = ["Env", "ManagerBasedRLEnvCfg", "State", "TaskEntry", "TermEnv", "VecEnv", "import_tasks", "list_tasks",
           "load_agent_yaml", "make", "register", "resolve", "task_cfg", "to_jax", "to_torch"]
