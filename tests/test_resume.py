"""`--resume` and `--checkpoint` in train, for every workflow, and one folder per run.

N/2 iterations and then a resume cannot give the checksum of N straight iterations bit for bit: the env state (the
robots' positions, the episode clocks) is not part of a checkpoint, so a resumed run resets its envs and collects
other experience from the resume on. What must hold instead, and is checked here: right after the restore, the
training state (weights, normalizers, optimizer state) is exactly the state the checkpoint saved, i.e. the state
at the end of the first run (summary.json's state_checksum), and training continues from the saved iteration."""

import json
import os
import re
import subprocess

import pytest
from conftest import PYTHON, REPO, run_cmd

SMALL = ["--num_envs", "32", "--device", "cpu"]
# workflow -> (train flags, checkpoint folder in a run dir, checkpoint regex with the iteration/timestep as group 1,
#              the number of the last checkpoint after 4 iterations, then after a resume for 2 more)
WORKFLOWS = {
    "rsl_rl": (["--library", "rsl_rl"], "", r"model_(\d+)\.pt", 3, 4),
    "rl_games": (["--library", "rl_games"], "nn", r"last_cartpole_ep_(\d+)_.*\.pth", 4, 6),
    # skrl counts env steps (16 per iteration); a checkpoint every iteration, so the last one is the end state
    "skrl-torch": (["--library", "skrl", "agent.agent.experiment.checkpoint_interval=16"], "checkpoints",
                   r"agent_(\d+)\.pt", 64, 96),
    "skrl-jax": (["--library", "skrl", "--ml_framework", "jax", "agent.agent.experiment.checkpoint_interval=16"],
                 "checkpoints", r"agent_(\d+)\.pickle", 64, 96),
    "brax": (["--library", "brax"], "", r"model_(\d+)\.pickle", 4, 6),
}


def train(root, flags, *extra):
    result = run_cmd([PYTHON, "-m", "fleetlab", "train", *flags, *SMALL, *extra], root, timeout=400)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def runs_of(root, library):
    base = os.path.join(root, "logs", library, "cartpole")
    return [os.path.join(base, d) for d in sorted(os.listdir(base))]


def numbers(folder, pattern):
    return sorted(int(m.group(1)) for f in os.listdir(folder) if (m := re.fullmatch(pattern, f)))


@pytest.mark.slow
@pytest.mark.parametrize("workflow", list(WORKFLOWS))
def test_resume_restores_the_saved_state_and_continues_at_the_saved_iteration(tmp_path, workflow):
    flags, subdir, pattern, first_end, resumed_end = WORKFLOWS[workflow]
    library = flags[1]
    train(tmp_path, flags, "--max_iterations", "4")
    train(tmp_path, flags, "--max_iterations", "2", "--resume")  # no other flag: the latest run's latest checkpoint
    first, second = runs_of(tmp_path, library)
    assert max(numbers(os.path.join(first, subdir), pattern)) == first_end
    ended = json.load(open(os.path.join(first, "summary.json")))
    resumed = json.load(open(os.path.join(second, "summary.json")))["resumed"]
    assert os.path.dirname(resumed["path"]).startswith(first), resumed
    assert re.fullmatch(pattern, os.path.basename(resumed["path"])).group(1) == str(first_end)
    # the state right after the restore is the state the first run ended with, as that checkpoint recorded it
    assert resumed["saved_state_checksum"] == ended["state_checksum"], (resumed, ended["state_checksum"])
    assert resumed["restored_state_checksum"] == resumed["saved_state_checksum"], resumed
    # and training went on from the saved iteration: 2 more iterations after it
    assert max(numbers(os.path.join(second, subdir), pattern)) == resumed_end


@pytest.mark.slow
def test_a_bare_checkpoint_name_in_train_names_a_file_of_the_latest_run(tmp_path):
    flags = ["--library", "rsl_rl", "agent.save_interval=2"]
    train(tmp_path, flags, "--max_iterations", "4")
    # a later folder with no checkpoint (a launch that failed before its first one keeps its rank logs) is passed over
    failed = os.path.join(tmp_path, "logs", "rsl_rl", "cartpole", "2099-01-01_00-00-00", "logs")
    os.makedirs(failed)
    train(tmp_path, flags, "--max_iterations", "1", "--checkpoint", "model_2.pt")
    first, second, _ = runs_of(tmp_path, "rsl_rl")
    resumed = json.load(open(os.path.join(second, "summary.json")))["resumed"]
    assert resumed["path"] == os.path.join(first, "model_2.pt")
    assert resumed["restored_state_checksum"] == resumed["saved_state_checksum"] is not None


@pytest.mark.parametrize("library,flags,message", [
    ("rsl_rl", ["--resume"], "no runs to load"),  # fails before the folder would exist
    # fails once the folder exists (the library's own check of the batch): the folder goes again
    ("rl_games", ["agent.params.config.minibatch_size=7"], "is not a multiple of minibatch_size 7"),
])
def test_a_failed_start_leaves_no_folder(tmp_path, library, flags, message):
    result = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", library, *SMALL, *flags], tmp_path, timeout=300)
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
    experiment = os.path.join(tmp_path, "logs", library, "cartpole")
    assert not os.path.exists(experiment) or not os.listdir(experiment), os.listdir(experiment)


@pytest.mark.slow
def test_two_runs_started_in_the_same_second_get_two_complete_folders(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"), PINNED_STAMP="2026-01-01_00-00-00")
    cmd = [PYTHON, os.path.join(REPO, "tests", "mp", "pinned_clock.py"), "train", "--library", "rsl_rl", *SMALL,
           "--max_iterations", "2"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = runs_of(tmp_path, "rsl_rl")
    assert [os.path.basename(r) for r in runs] == ["2026-01-01_00-00-00", "2026-01-01_00-00-00_2"]
    pids = set()
    for run in runs:
        summary = json.load(open(os.path.join(run, "summary.json")))
        assert summary["final"] and numbers(run, r"model_(\d+)\.pt") == [0, 1]
        pids.add(summary["ranks"][0]["pid"])
    assert len(pids) == 2  # each folder holds one run's summary, not the same run's twice


@pytest.mark.slow
def test_playing_an_older_checkpoint_keeps_the_latest_ones_play_json(tmp_path):
    train(tmp_path, ["--library", "rsl_rl", "agent.save_interval=1"], "--max_iterations", "2")
    (run,) = runs_of(tmp_path, "rsl_rl")
    play = [PYTHON, "-m", "fleetlab", "play", "--library", "rsl_rl", "--num_envs", "4", "--steps", "20", "--device",
            "cpu", "--no-export"]
    assert run_cmd(play, tmp_path, timeout=300).returncode == 0
    latest = json.load(open(os.path.join(run, "play.json")))
    assert latest["checkpoint"] == os.path.join(run, "model_1.pt")
    assert run_cmd([*play, "--checkpoint", "model_0.pt"], tmp_path, timeout=300).returncode == 0
    older = json.load(open(os.path.join(run, "play_model_0.json")))
    assert older["checkpoint"] == os.path.join(run, "model_0.pt")
    assert json.load(open(os.path.join(run, "play.json"))) == latest  # not overwritten
