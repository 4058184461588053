"""Go1 rough agent configs: Isaac Lab's UnitreeGo1RoughPPORunnerCfg for rsl_rl (1,500 iterations of 24 steps,
[512, 256, 128] ELU), its skrl_rough_ppo_cfg.yaml for skrl, and an rl_games config with the same network, rollout
and PPO settings (Isaac Lab has none for the Go1)."""

from fleetlab.tasks.agents import agent_configs
from fleetlab.tasks.go1.agents import without_obs_normalization
from fleetlab.tasks.locomotion_agents import rsl_rl_ppo


def rsl_rl() -> dict:
    # One change from Isaac Lab's config, as on flat ground (tasks/go1/agents): observation normalization, because
    # our explicit PD lets joint velocities reach +-45 rad/s where Isaac Lab's actuator network does not.
    # `agent.actor.obs_normalization=false agent.critic.obs_normalization=false` gives Isaac Lab's config back.
    return rsl_rl_ppo("unitree_go1_rough", hidden_dims=(512, 256, 128), obs_normalization=True, num_steps_per_env=24,
                      max_iterations=1500, learning_rate=1.0e-3, entropy_coef=0.01)


def rsl_rl_isaaclab() -> dict:
    """Isaac Lab's UnitreeGo1RoughPPORunnerCfg unchanged: no observation normalization."""
    return without_obs_normalization(rsl_rl())


ALL = agent_configs(__file__, rsl_rl, rsl_rl_isaaclab=rsl_rl_isaaclab)
