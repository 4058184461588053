"""The agent configs of a task, as its agents/__init__.py offers them (`ALL = agent_configs(__file__, rsl_rl)`):
rsl_rl's from a function, rl_games' and skrl's from the YAML files beside that module (rl_games_ppo_cfg.yaml,
skrl_ppo_cfg.yaml) where they exist, brax's derived from rsl_rl's (tasks/brax_agents.py), and any other variant
(`--agent rsl_rl_<variant>`). A user's task package uses the same call."""

from __future__ import annotations

import functools
import os
from typing import Callable

from fleetlab.envs import load_agent_yaml
from fleetlab.tasks.brax_agents import brax_ppo

YAML_FILES = {"rl_games": "rl_games_ppo_cfg.yaml", "skrl": "skrl_ppo_cfg.yaml"}


def _brax(rsl_rl: Callable[[], dict]) -> dict:
    return brax_ppo(rsl_rl())  # the same networks and schedule as rsl_rl's


def agent_configs(module_file: str, rsl_rl: Callable[[], dict], **variants: Callable[[], dict]) -> dict:
    configs = {"rsl_rl": rsl_rl}
    for library, name in YAML_FILES.items():
        if os.path.isfile(os.path.join(os.path.dirname(module_file), name)):
            configs[library] = functools.partial(load_agent_yaml, module_file, name)
    configs["brax"] = functools.partial(_brax, rsl_rl)
    return {**configs, **variants}
