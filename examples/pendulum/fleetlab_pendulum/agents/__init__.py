"""Agent configs, one function per library, each returning a fresh dict (fleetlab applies the flags and the
agent.x=y overrides to it): rsl_rl's in rsl-rl-lib 5.x's dict format, rl_games' and skrl's as the YAML files
beside this module, brax's derived from rsl_rl's (fleetlab.tasks.agents.agent_configs)."""

from fleetlab.tasks.agents import agent_configs


def rsl_rl() -> dict:
    mlp = {"hidden_dims": [64, 64], "activation": "elu", "obs_normalization": False}
    return {
        "experiment_name": "pendulum_swingup",
        "run_name": "",
        "num_steps_per_env": 32,
        "max_iterations": 200,
        "save_interval": 50,
        "logger": "tensorboard",
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {"class_name": "MLPModel", **mlp,
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}},
        "critic": {"class_name": "MLPModel", **mlp},
        "algorithm": {
            "class_name": "PPO", "value_loss_coef": 1.0, "use_clipped_value_loss": True, "clip_param": 0.2,
            "entropy_coef": 0.005, "num_learning_epochs": 5, "num_mini_batches": 4, "learning_rate": 1.0e-3,
            "schedule": "adaptive", "gamma": 0.99, "lam": 0.95, "desired_kl": 0.01, "max_grad_norm": 1.0,
        },
    }


ALL = agent_configs(__file__, rsl_rl)
