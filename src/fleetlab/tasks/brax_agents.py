"""A task's Brax PPO config, derived from its rsl_rl config (tasks/agents.py: agent_configs does it for every
task), so that both libraries train the same networks on the same schedule:

- one Brax training step = one rsl_rl iteration: every env steps `num_steps_per_env` (Brax's unroll_length), then
  `num_learning_epochs` passes (num_updates_per_batch) over `num_mini_batches` minibatches;
- the same MLP sizes and activation, a Gaussian with a scalar std starting at `init_std` (rsl_rl's
  GaussianDistribution; Brax's default would squash the actions with tanh);
- the same lr, adaptive-KL schedule, entropy, clip, gamma, lambda, max grad norm and observation normalization.
  rsl_rl's value loss is value_loss_coef * MSE, Brax's 0.5 * vf_loss_coefficient * MSE: the coefficient doubles;
  rsl_rl's clipped value loss (use_clipped_value_loss) is Brax's clipping_epsilon_value at the same clip;
- time-outs bootstrapped as rsl_rl does (reward += gamma * V(s) on the time-out step): Brax's
  bootstrap_on_timeout, fed by the `time_out` our BraxEnv reports. Brax's default instead drops the time-out
  step's advantage (its `truncation` mask).
"""

from __future__ import annotations


def brax_ppo(rsl_rl: dict) -> dict:
    alg, actor, critic = rsl_rl["algorithm"], rsl_rl["actor"], rsl_rl["critic"]
    distribution = actor.get("distribution_cfg", {})
    return {
        "experiment_name": rsl_rl["experiment_name"],
        "run_name": rsl_rl.get("run_name", ""),
        "max_iterations": rsl_rl["max_iterations"],
        "save_interval": rsl_rl["save_interval"],
        "log_interval": 10,  # iterations per compiled Brax epoch: one progress line, TensorBoard row, checkpoint chance
        "num_steps_per_env": rsl_rl["num_steps_per_env"],
        "network": {
            "policy_hidden_layer_sizes": list(actor["hidden_dims"]),
            "value_hidden_layer_sizes": list(critic["hidden_dims"]),
            "activation": actor["activation"],
            "distribution_type": "normal",
            "noise_std_type": "log" if distribution.get("std_type") == "log" else "scalar",
            "init_noise_std": distribution.get("init_std", 1.0),
        },
        "ppo": {
            "learning_rate": alg["learning_rate"],
            "learning_rate_schedule": "ADAPTIVE_KL" if alg.get("schedule") == "adaptive" else None,
            "desired_kl": alg.get("desired_kl", 0.01),
            "entropy_cost": alg["entropy_coef"],
            "discounting": alg["gamma"],
            "gae_lambda": alg["lam"],
            "clipping_epsilon": alg["clip_param"],
            "num_minibatches": alg["num_mini_batches"],
            "num_updates_per_batch": alg["num_learning_epochs"],
            "max_grad_norm": alg.get("max_grad_norm"),
            "vf_loss_coefficient": 2.0 * alg["value_loss_coef"],
            "clipping_epsilon_value": alg["clip_param"] if alg.get("use_clipped_value_loss", True) else None,
            "bootstrap_on_timeout": True,
            "normalize_observations": bool(actor.get("obs_normalization", False)),
            "reward_scaling": 1.0,
        },
    }
