"""Tasks: a config dataclass, an MJCF and pure JAX term functions each; agents/ holds each library's config."""

import os

import yaml


def load_agent_yaml(module_file: str, name: str) -> dict:
    """A fresh copy of the YAML agent config `name` that lies next to `module_file`."""
    with open(os.path.join(os.path.dirname(module_file), name)) as f:
        return yaml.safe_load(f)
