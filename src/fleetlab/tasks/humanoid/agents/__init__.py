"""humanoid agent configs for rsl_rl, rl_games and skrl, following Isaac Lab's."""

from fleetlab.tasks.agents import agent_configs
from fleetlab.tasks.locomotion_agents import rsl_rl_ppo


def rsl_rl() -> dict:
    return rsl_rl_ppo("humanoid")


ALL = agent_configs(__file__, rsl_rl)
