import os

import yaml


def cfg() -> dict:
    with open(os.path.join(os.path.dirname(__file__), "skrl_ppo_cfg.yaml")) as f:
        return yaml.safe_load(f)
