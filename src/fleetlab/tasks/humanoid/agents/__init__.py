"""humanoid agent configs for rsl_rl, rl_games and skrl, following Isaac Lab's."""

from fleetlab.envs import load_agent_yaml
from fleetlab.tasks.brax_agents import brax_ppo
from fleetlab.tasks.locomotion_agents import rsl_rl_ppo


def rsl_rl() -> dict:
    return rsl_rl_ppo("humanoid")


def rl_games() -> dict:
    return load_agent_yaml(__file__, "rl_games_ppo_cfg.yaml")


def skrl() -> dict:
    return load_agent_yaml(__file__, "skrl_ppo_cfg.yaml")


def brax() -> dict:
    return brax_ppo(rsl_rl())  # the same networks and schedule as rsl_rl's


ALL = {"rsl_rl": rsl_rl, "rl_games": rl_games, "skrl": skrl, "brax": brax}
