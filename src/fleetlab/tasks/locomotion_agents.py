"""rsl_rl configs of the classic locomotion tasks: Isaac Lab's AntPPORunnerCfg / HumanoidPPORunnerCfg, in
rsl-rl-lib 5.x's dict format. They differ only in the experiment name."""


def rsl_rl_ppo(experiment_name: str) -> dict:
    mlp = {"hidden_dims": [400, 200, 100], "activation": "elu",
           # on for both tasks: the feet wrenches and the velocities span very different ranges
           "obs_normalization": True}
    return {
        "experiment_name": experiment_name,
        "run_name": "",
        "num_steps_per_env": 32,
        "max_iterations": 1000,
        "save_interval": 50,
        "logger": "tensorboard",
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {"class_name": "MLPModel", **mlp,
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}},
        "critic": {"class_name": "MLPModel", **mlp},
        "algorithm": {
            "class_name": "PPO", "value_loss_coef": 1.0, "use_clipped_value_loss": True, "clip_param": 0.2,
            "entropy_coef": 0.0, "num_learning_epochs": 5, "num_mini_batches": 4, "learning_rate": 5.0e-4,
            "schedule": "adaptive", "gamma": 0.99, "lam": 0.95, "desired_kl": 0.01, "max_grad_norm": 1.0,
        },
    }
