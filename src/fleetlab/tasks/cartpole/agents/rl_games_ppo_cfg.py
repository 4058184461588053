from fleetlab.tasks import load_agent_yaml


def cfg() -> dict:
    return load_agent_yaml(__file__, "rl_games_ppo_cfg.yaml")
