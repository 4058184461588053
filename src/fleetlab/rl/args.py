"""Isaac Lab's train/play flags, shared by every library's scripts and by `fleetlab train|play`."""

from __future__ import annotations

import argparse


def add_args(parser: argparse.ArgumentParser, library: str, play: bool = False) -> argparse.ArgumentParser:
    p = parser
    p.add_argument("--task", type=str, default="Isaac-Cartpole-v0", help="task id (see `fleetlab list`)")
    p.add_argument("--num_envs", type=int, default=None, help="envs PER PROCESS (N processes collect N x this)")
    p.add_argument("--seed", type=int, default=None, help="base seed; each rank adds its global rank")
    p.add_argument("--device", type=str, default=None, help="cpu | cuda | cuda:K (default: cuda:LOCAL_RANK if present)")
    p.add_argument("--distributed", action="store_true", default=False, help="train with several processes")
    p.add_argument("--headless", action="store_true", default=False, help="accepted for Isaac Lab compatibility")
    p.add_argument("--video", action="store_true", default=False, help="record an mp4 of the (trained) policy")
    p.add_argument("--video_length", type=int, default=200, help="steps in the video")
    p.add_argument("--physics_impl", type=str, default="jax", choices=["jax", "warp"], help="MJX implementation")
    p.add_argument("--dist_timeout", type=float, default=600.0, help="collective timeout in seconds")
    p.add_argument("--checkpoint", type=str, default=None, help="checkpoint path (or file-name regex for rsl_rl)")
    if library == "rsl_rl":
        p.add_argument("--experiment_name", type=str, default=None)
        p.add_argument("--run_name", type=str, default=None)
        p.add_argument("--resume", action="store_true", default=False)
        p.add_argument("--load_run", type=str, default=None, help="run-folder regex (default: the latest)")
        p.add_argument("--logger", type=str, default=None, choices=["tensorboard", "wandb", "neptune"])
    if library == "skrl":
        p.add_argument("--ml_framework", type=str, default="torch", choices=["torch", "jax"])
        p.add_argument("--algorithm", type=str, default="PPO", choices=["PPO"])
    if play:
        p.add_argument("--steps", type=int, default=1000, help="steps to evaluate the policy for")
        p.add_argument("--export", action="store_true", default=True, help="export TorchScript and ONNX")
    else:
        p.add_argument("--max_iterations", type=int, default=None)
        p.add_argument("--bench", action="store_true", default=False,
                       help="after training, also measure env-only and policy-inference FPS (for `fleetlab bench`)")
    return p


def parse(library: str, play: bool = False, argv: list[str] | None = None) -> argparse.Namespace:
    """Isaac Lab's flags, plus Hydra-style `agent.<path>=<value>` overrides of the agent config, as Isaac Lab's
    scripts accept (e.g. `agent.params.config.schedule_type=standard`)."""
    what = "Play" if play else "Train"
    parser = argparse.ArgumentParser(description=f"{what} a fleetlab task with {library}.")
    add_args(parser, library, play)
    parser.add_argument("overrides", nargs="*", help="agent.<key.path>=<yaml value> overrides of the agent config")
    args = parser.parse_args(argv)
    for item in args.overrides:
        if not item.startswith("agent.") or "=" not in item:
            parser.error(f"override '{item}' must look like agent.<key.path>=<value>")
    return args


def apply_overrides(cfg: dict, overrides: list[str]) -> dict:
    """Set `agent.a.b=value` in the nested dict `cfg` (value parsed as YAML). Unknown keys are an error."""
    import yaml

    for item in overrides:
        path, value = item[len("agent."):].split("=", 1)
        keys = path.split(".")
        node = cfg
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                raise KeyError(f"override '{item}': '{key}' is not a section of the agent config")
            node = node[key]
        if keys[-1] not in node:
            raise KeyError(f"override '{item}': no key '{keys[-1]}' in the agent config (known: {', '.join(node)})")
        node[keys[-1]] = yaml.safe_load(value)
    return cfg
