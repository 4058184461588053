"""Cartpole agent configs, one function per library (a fresh dict each call): Isaac Lab's CartpolePPORunnerCfg in
rsl-rl-lib 5.x's dict format, and its rl_games and skrl YAML files."""

import copy

from fleetlab.tasks.agents import agent_configs

CARTPOLE_PPO = {
    "experiment_name": "cartpole",
    "run_name": "",
    "num_steps_per_env": 16,
    "max_iterations": 150,
    "save_interval": 50,
    "logger": "tensorboard",
    "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
    "actor": {
        "class_name": "MLPModel",
        "hidden_dims": [32, 32],
        "activation": "elu",
        "obs_normalization": False,
        "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"},
    },
    "critic": {"class_name": "MLPModel", "hidden_dims": [32, 32], "activation": "elu", "obs_normalization": False},
    "algorithm": {
        "class_name": "PPO",
        "value_loss_coef": 1.0,
        "use_clipped_value_loss": True,
        "clip_param": 0.2,
        "entropy_coef": 0.005,
        "num_learning_epochs": 5,
        "num_mini_batches": 4,
        "learning_rate": 1.0e-3,
        "schedule": "adaptive",
        "gamma": 0.99,
        "lam": 0.95,
        "desired_kl": 0.01,
        "max_grad_norm": 1.0,
    },
}


def rsl_rl() -> dict:
    return copy.deepcopy(CARTPOLE_PPO)


ALL = agent_configs(__file__, rsl_rl)
