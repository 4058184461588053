"""Go1 flat agent configs: Isaac Lab's UnitreeGo1FlatPPORunnerCfg for rsl_rl (rsl-rl-lib 5.x dict format, with
observation normalization), and
rl_games and skrl configs following Isaac Lab's flat-ground velocity configs (same network, rollout and PPO
settings as the rsl_rl one)."""

from fleetlab.tasks.agents import agent_configs
from fleetlab.tasks.locomotion_agents import rsl_rl_ppo


def rsl_rl() -> dict:
    # One change from Isaac Lab's config: observation normalization. Isaac Lab drives the Go1 with a learned
    # actuator network; our explicit PD lets the joint velocities reach +-45 rad/s while the robot flails, and
    # without normalization the H200 acceptance run fell in 3.4% of play episodes (0.87% with it; same call,
    # benchmarks/results/2026-12-03_h200_go1). `agent.actor.obs_normalization=false
    # agent.critic.obs_normalization=false` gives Isaac Lab's config back.
    return rsl_rl_ppo("unitree_go1_flat", hidden_dims=(128, 128, 128), obs_normalization=True, num_steps_per_env=24,
                      max_iterations=300, learning_rate=1.0e-3, entropy_coef=0.01)


def without_obs_normalization(cfg: dict) -> dict:
    """Isaac Lab's Go1 runner config as it is (--agent rsl_rl_isaaclab)."""
    cfg["actor"]["obs_normalization"] = cfg["critic"]["obs_normalization"] = False
    return cfg


def rsl_rl_isaaclab() -> dict:
    """Isaac Lab's UnitreeGo1FlatPPORunnerCfg unchanged: no observation normalization."""
    return without_obs_normalization(rsl_rl())


ALL = agent_configs(__file__, rsl_rl, rsl_rl_isaaclab=rsl_rl_isaaclab)
