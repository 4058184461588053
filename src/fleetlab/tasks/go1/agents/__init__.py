"""Go1 flat agent configs: Isaac Lab's UnitreeGo1FlatPPORunnerCfg for rsl_rl (rsl-rl-lib 5.x dict format), and
rl_games and skrl configs following Isaac Lab's flat-ground velocity configs (same network, rollout and PPO
settings as the rsl_rl one)."""

from fleetlab.envs import load_agent_yaml


def rsl_rl() -> dict:
    mlp = {"hidden_dims": [128, 128, 128], "activation": "elu", "obs_normalization": False}
    return {
        "experiment_name": "unitree_go1_flat",
        "run_name": "",
        "num_steps_per_env": 24,
        "max_iterations": 300,
        "save_interval": 50,
        "logger": "tensorboard",
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {"class_name": "MLPModel", **mlp,
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}},
        "critic": {"class_name": "MLPModel", **mlp},
        "algorithm": {
            "class_name": "PPO", "value_loss_coef": 1.0, "use_clipped_value_loss": True, "clip_param": 0.2,
            "entropy_coef": 0.01, "num_learning_epochs": 5, "num_mini_batches": 4, "learning_rate": 1.0e-3,
            "schedule": "adaptive", "gamma": 0.99, "lam": 0.95, "desired_kl": 0.01, "max_grad_norm": 1.0,
        },
    }


def rl_games() -> dict:
    return load_agent_yaml(__file__, "rl_games_ppo_cfg.yaml")


def skrl() -> dict:
    return load_agent_yaml(__file__, "skrl_ppo_cfg.yaml")


ALL = {"rsl_rl": rsl_rl, "rl_games": rl_games, "skrl": skrl}
