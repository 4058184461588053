"""A user's mistake is one line, `fleetlab: error: ...`, exit code 2, no traceback; a bug keeps its traceback.
Checkpoints are read without running code from them."""

import os
import pickle

import pytest
from conftest import PYTHON, REPO, run_cmd

SMALL = ["--num_envs", "16", "--device", "cpu"]
PWNED = "pwned_by_checkpoint"  # the file a malicious checkpoint tries to create in the working folder


class RunsCode:
    """Unpickling this runs a shell command: what a malicious checkpoint would carry."""

    def __reduce__(self):
        return (os.system, (f"touch {PWNED}",))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A real rsl_rl checkpoint (one training iteration), a brax-shaped one, and broken or malicious files next to
    it."""
    import torch

    root = tmp_path_factory.mktemp("bad_input")
    result = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", "rsl_rl", "--max_iterations", "1", *SMALL], root,
                     timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    run = os.path.join(root, "logs", "rsl_rl", "cartpole")
    model = os.path.join(run, os.listdir(run)[0], "model_0.pt")
    data = open(model, "rb").read()
    paths = {"rsl_rl": model, "empty": root / "empty.pt", "random": root / "random.pt",
             "truncated": root / "truncated.pt", "malicious": root / "malicious.pt",
             "malicious_jax": root / "malicious.pickle", "brax": root / "model_1.pickle"}
    paths["empty"].write_bytes(b"")
    paths["random"].write_bytes(os.urandom(2048))
    paths["truncated"].write_bytes(data[: len(data) // 2])
    torch.save({**torch.load(model, weights_only=True), "extra": RunsCode()}, paths["malicious"])
    paths["malicious_jax"].write_bytes(pickle.dumps({"policy": RunsCode()}))
    brax_params = {"normalizer": b"", "policy": b"", "value": b""}  # brax's format (rl/brax/params.py), empty trees
    paths["brax"].write_bytes(pickle.dumps({"brax_params": brax_params, "iteration": 1, "env_steps": 256}))
    return root, {k: str(v) for k, v in paths.items()}


TRAIN = ["-m", "fleetlab", "train", "--library", "rsl_rl", *SMALL]
PLAY = ["-m", "fleetlab", "play", "--library", "rsl_rl", *SMALL]
RL_GAMES_PLAY = [os.path.join(REPO, "scripts", "reinforcement_learning", "rl_games", "play.py"), *SMALL]
BRAX_PLAY = ["-m", "fleetlab", "play", "--library", "brax", *SMALL]
SKRL_JAX_PLAY = ["-m", "fleetlab", "play", "--library", "skrl", "--ml_framework", "jax", *SMALL]

CASES = {
    "max_iterations 0": ([*TRAIN, "--max_iterations", "0"], "--max_iterations: must be a positive integer, got 0"),
    "max_iterations < 0": ([*TRAIN, "--max_iterations", "-5"], "--max_iterations: must be a positive integer, got -5"),
    "override of the wrong type": ([*TRAIN, "--max_iterations", "1", "agent.num_steps_per_env=many"],
                                   "override 'agent.num_steps_per_env=many': expected int"),
    "unknown override key": ([*TRAIN, "agent.num_step_per_env=8"], "no key 'num_step_per_env' in the agent config"),
    "unknown env field": ([*TRAIN, "env.episode_lenght_s=10"], "has no field 'episode_lenght_s' (fields: "),
    "env override of the wrong type": ([*TRAIN, "env.episode_length_s=long"],
                                       "override 'env.episode_length_s=long': expected float"),
    "unknown env dict key": ([*TRAIN, "env.reward_weights.balance=2.0"], "no key 'balance' in"),
    "neither agent. nor env.": ([*TRAIN, "sim.dt=0.1"], "must look like agent.<key.path>=<value> or env."),
    "unknown agent config": ([*TRAIN, "--agent", "rsl_rl_fast"], "has no rsl_rl agent config 'rsl_rl_fast'"),
    "another library's agent config": ([*RL_GAMES_PLAY, "--task", "Isaac-Velocity-Flat-Unitree-Go1-Play-v0",
                                        "--agent", "rsl_rl_isaaclab"], "has no rl_games agent config 'rsl_rl_isaaclab'"),
    "video_length 0": ([*TRAIN, "--video", "--video_length", "0"], "--video_length: must be a positive integer, got 0"),
    "video_length < 0": ([*PLAY, "--video_length", "-1"], "--video_length: must be a positive integer, got -1"),
    "empty checkpoint": ([*PLAY, "--checkpoint", "{empty}"], "is not a readable checkpoint: the file is empty"),
    "random bytes": ([*PLAY, "--checkpoint", "{random}"],
                     "is not a readable checkpoint: it is not a file written by torch"),
    "truncated checkpoint": ([*PLAY, "--checkpoint", "{truncated}"],
                             "is not a readable checkpoint (damaged, truncated"),
    "another library's checkpoint": ([*RL_GAMES_PLAY, "--checkpoint", "{rsl_rl}"],
                                     "was written by rsl_rl, but rl_games was asked to read it"),
    "rsl_rl checkpoint to brax play": ([*BRAX_PLAY, "--checkpoint", "{rsl_rl}"],
                                       "was written by rsl_rl, but brax was asked to read it"),
    "brax checkpoint to rsl_rl play": ([*PLAY, "--checkpoint", "{brax}"],
                                       "was written by brax, but rsl_rl was asked to read it"),
    "malicious torch checkpoint": ([*PLAY, "--checkpoint", "{malicious}"], "refused to load"),
    "malicious skrl-JAX pickle": ([*SKRL_JAX_PLAY, "--checkpoint", "{malicious_jax}"], "refused to load"),
    "unknown task": ([*TRAIN, "--task", "Isaac-Cartpol-v0"], "Did you mean 'Isaac-Cartpole-v0'?"),
    "unknown flag": ([*TRAIN, "--num_robots", "4"], "unrecognized arguments: --num_robots"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_exit_2(files, case):
    root, paths = files
    args, message = CASES[case]
    result = run_cmd([PYTHON, *[a.format(**paths) for a in args]], root, timeout=300)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("fleetlab: error: "), result.stderr[-3000:]
    assert message in lines[0], lines[0]
    assert not os.path.exists(os.path.join(root, PWNED)), "a checkpoint ran code"


def test_a_bug_keeps_its_traceback(monkeypatch):
    """Only FleetlabError becomes a one-line error: anything else (here a RuntimeError) propagates unchanged."""
    from fleetlab import cli
    from fleetlab.rl import args as rl_args

    def broken(*_a, **_k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(rl_args, "parse", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["train", "--library", "rsl_rl"])

