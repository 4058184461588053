"""Episode statistics from every rank (issue F): rl_games and skrl (torch and JAX) log the same means over every
rank's finished episodes that rsl_rl logs. Two processes whose envs earn different returns (tests/mp/
rank_reward_task.py: with 1 s episodes rank 0's return 1.0, rank 1's 2.0) must log 1.5, not rank 0's 1.0. The
same runs log to wandb (offline): one wandb run, started by rank 0, holds the same scalars; and they are Isaac
Lab's acceptance run: env. and agent. overrides, shown in params/*.yaml with world_size 2."""

import glob
import os
import shutil

import pytest
import yaml
from conftest import PYTHON, REPO, free_port, run_cmd, torchrun

TASK = os.path.join(REPO, "tests", "mp", "rank_reward_task.py")
# (library, launcher, the return's TensorBoard tag, extra flags); rollouts and epochs as small as each allows
# Each run also takes an env. override (episodes of 60 steps: rank 0's return 1.0, rank 1's 2.0, pooled 1.5) and an
# agent. override, which params/{env,agent}.yaml must show.
CASES = {
    "rl_games": ("torchrun", "rewards/iter", ["--max_iterations=5", "agent.params.config.mini_epochs=2"]),
    "skrl": ("torchrun", "Reward / Total reward (mean)", ["--max_iterations=5", "agent.agent.learning_epochs=2"]),
    "skrl-jax": ("jax", "Reward / Total reward (mean)",
                 ["--max_iterations=5", "agent.agent.learning_epochs=2", "--ml_framework", "jax"]),
}


def scalars(root: str) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = {}
    for events in glob.glob(os.path.join(root, "logs", "**", "events.out.tfevents.*"), recursive=True):
        acc = EventAccumulator(events, size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            out.setdefault(tag, []).extend(p.value for p in acc.Scalars(tag))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_two_ranks_log_the_mean_over_both(tmp_path, case):
    launcher, tag, flags = CASES[case]
    library = case.split("-")[0]
    shutil.copy(TASK, tmp_path)  # --import finds modules in the working folder
    script = os.path.join(REPO, "scripts", "reinforcement_learning", library, "train.py")
    args = [script, "--task=Test-RankReward-v0", "--import=rank_reward_task", "--headless", "--distributed",
            "--num_envs=16", "env.episode_length_s=1.0", *flags]
    args += ["--logger", "wandb", "--log_project_name", "fleetlab-test"]
    offline = {"WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    if launcher == "torchrun":
        proc = torchrun(2, args, cwd=tmp_path, timeout=600, env_extra=offline)
    else:
        proc = run_cmd([PYTHON, "-m", "fleetlab.distributed.jax_launch", "--nnodes=1", "--nproc_per_node=2",
                        f"--coordinator_address=127.0.0.1:{free_port()}", *args], tmp_path, timeout=600,
                       env_extra=offline)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (params,) = glob.glob(os.path.join(tmp_path, "logs", "**", "params"), recursive=True)
    with open(os.path.join(params, "env.yaml")) as f:
        env = yaml.safe_load(f)
    with open(os.path.join(params, "agent.yaml")) as f:
        agent = yaml.safe_load(f)
    assert env["episode_length_s"] == 1.0 and env["world_size"] == 2 and env["num_envs_per_rank"] == 16, env
    epochs = agent["params"]["config"]["mini_epochs"] if library == "rl_games" else agent["agent"]["learning_epochs"]
    assert epochs == 2, agent
    runs = glob.glob(os.path.join(tmp_path, "**", "offline-run-*", "*.wandb"), recursive=True)
    assert len(runs) == 1, f"one wandb run (rank 0's), found {runs}"
    with open(runs[0], "rb") as f:
        record = f.read()  # protobuf: the project, keys and the config's JSON are stored as plain UTF-8
    assert b"fleetlab-test" in record and tag.encode() in record and b"Episode_Reward/alive" in record
    logged = scalars(str(tmp_path))
    assert logged.get(tag), sorted(logged)
    assert all(v == pytest.approx(1.5, abs=1e-4) for v in logged[tag]), (tag, logged[tag])
    # the env's per-episode terms, per second of episode: rank 0's 1.0, rank 1's 2.0
    assert logged.get("Episode_Reward/alive"), sorted(logged)
    alive = logged["Episode_Reward/alive"]
    assert all(v == pytest.approx(1.5, abs=1e-4) for v in alive), alive
