from fleetlab.tasks import load_agent_yaml


def cfg() -> dict:
    return load_agent_yaml(__file__, "skrl_ppo_cfg.yaml")
