"""Videos during training (issue F): `--video --video_interval N --video_length L` writes videos/train/step-<k N>.mp4
on rank 0 from a separate render env, and leaves training exactly as it is without videos: the same parameters,
bit for bit, with the observation normalizers on (a normalizer left in eval mode by the video would stop
updating)."""

import glob
import json
import os

import pytest
from conftest import PYTHON, run_cmd

# per library: the flags that turn its observation normalizer on
NORMALIZED = {
    "rsl_rl": ["agent.actor.obs_normalization=true", "agent.critic.obs_normalization=true"],
    "rl_games": ["agent.params.config.normalize_input=true"],
    "skrl": ["agent.agent.state_preprocessor=RunningStandardScaler"],
    "skrl-jax": ["agent.agent.state_preprocessor=RunningStandardScaler", "--ml_framework", "jax"],
}
BRAX_NORMALIZED = ["agent.ppo.normalize_observations=true"]


def train(cwd, library, extra=()):
    os.makedirs(cwd, exist_ok=True)
    proc = run_cmd([PYTHON, "-m", "fleetlab", "train", "--library", library.split("-")[0],
                    "--task", "Isaac-Cartpole-v0", "--num_envs", "16", "--max_iterations", "4", "--device", "cpu",
                    *NORMALIZED.get(library, []), *extra],
                   cwd, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (summary,) = glob.glob(os.path.join(cwd, "logs", "**", "summary.json"), recursive=True)
    with open(summary) as f:
        return json.load(f), os.path.dirname(summary), proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("library", list(NORMALIZED))
def test_videos_during_training_leave_training_unchanged(tmp_path, library):
    plain, _, _ = train(tmp_path / "plain", library)
    filmed, run_dir, out = train(tmp_path / "video", library,
                                 ["--video", "--video_interval", "30", "--video_length", "5"])
    videos = sorted(os.listdir(os.path.join(run_dir, "videos", "train")))
    steps = 4 * 16  # 4 rollouts of 16 steps (Cartpole's configs), all libraries
    assert videos == sorted(f"step-{s}.mp4" for s in range(0, steps, 30)), videos
    assert all(os.path.getsize(os.path.join(run_dir, "videos", "train", v)) > 1000 for v in videos)
    assert "video at env step 30" in out
    checksums = lambda summary: [r["checksum"] for r in summary["ranks"]]  # noqa: E731
    assert checksums(filmed) == checksums(plain), "the same parameters with and without videos"


@pytest.mark.slow
def test_brax_videos_between_epochs_leave_training_unchanged(tmp_path):
    """Brax's rollouts never leave XLA, so its videos are taken between epochs (one iteration of 16 env steps each
    here): at the first epoch end at or after each multiple of --video_interval."""
    args = [*BRAX_NORMALIZED, "agent.log_interval=1"]
    plain, _, _ = train(tmp_path / "plain", "brax", args)
    filmed, run_dir, out = train(tmp_path / "video", "brax",
                                 [*args, "--video", "--video_interval", "30", "--video_length", "5"])
    videos = sorted(os.listdir(os.path.join(run_dir, "videos", "train")))
    assert videos == ["step-0.mp4", "step-32.mp4", "step-64.mp4"], videos  # epochs end at steps 16, 32, 48, 64
    assert all(os.path.getsize(os.path.join(run_dir, "videos", "train", v)) > 1000 for v in videos)
    assert "video at env step 32" in out
    checksums = lambda summary: [r["checksum"] for r in summary["ranks"]]  # noqa: E731
    assert checksums(filmed) == checksums(plain), "the same parameters with and without videos"
