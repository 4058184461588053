"""rsl_rl configs of the locomotion tasks, in rsl-rl-lib 5.x's dict format: Isaac Lab's AntPPORunnerCfg /
HumanoidPPORunnerCfg (the defaults here; they differ only in the experiment name) and, with its arguments,
UnitreeGo1FlatPPORunnerCfg."""


def rsl_rl_ppo(experiment_name: str, hidden_dims=(400, 200, 100), obs_normalization: bool = True,
               num_steps_per_env: int = 32, max_iterations: int = 1000, learning_rate: float = 5.0e-4,
               entropy_coef: float = 0.0) -> dict:
    # Ant and Humanoid normalize: their feet wrenches and velocities span very different ranges
    mlp = {"hidden_dims": list(hidden_dims), "activation": "elu", "obs_normalization": obs_normalization}
    return {
        "experiment_name": experiment_name,
        "run_name": "",
        "num_steps_per_env": num_steps_per_env,
        "max_iterations": max_iterations,
        "save_interval": 50,
        "logger": "tensorboard",
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {"class_name": "MLPModel", **mlp,
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}},
        "critic": {"class_name": "MLPModel", **mlp},
        "algorithm": {
            "class_name": "PPO", "value_loss_coef": 1.0, "use_clipped_value_loss": True, "clip_param": 0.2,
            "entropy_coef": entropy_coef, "num_learning_epochs": 5, "num_mini_batches": 4,
            "learning_rate": learning_rate, "schedule": "adaptive", "gamma": 0.99, "lam": 0.95, "desired_kl": 0.01,
            "max_grad_norm": 1.0,
        },
    }
