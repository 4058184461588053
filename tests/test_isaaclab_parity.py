"""What Isaac Lab's users type (issue F): `env.<path>=<value>` overrides of the task config, `--agent`, the
params/{env,agent}.yaml dump, `--logger wandb` with rsl_rl, and `fleetlab list`."""

import glob
import os

import pytest
import yaml
from conftest import PYTHON, REPO, only_run_dir, run_cmd, torchrun

from fleetlab.envs import resolve
from fleetlab.envs.registry import agent_cfg, agent_libraries
from fleetlab.errors import FleetlabError
from fleetlab.rl.overrides import env_overrides
from fleetlab.tasks.go1.cfg import go1_flat


def test_env_overrides_are_checked_against_the_config_dataclass():
    cfg = go1_flat()
    kwargs = env_overrides(cfg, ["env.episode_length_s=10", "env.rewards.feet_air_time.weight=2",
                                 "env.rewards.lin_vel_z_l2.weight=-1.5",
                                 "env.commands.base_velocity.ranges.lin_vel_x=[-0.5, 1.5]",
                                 "env.rewards.feet_air_time.params.threshold=0.4"])
    assert kwargs["episode_length_s"] == 10.0 and isinstance(kwargs["episode_length_s"], float)
    assert kwargs["rewards"]["feet_air_time"].weight == 2.0 and kwargs["rewards"]["lin_vel_z_l2"].weight == -1.5
    assert kwargs["rewards"]["feet_air_time"].params["threshold"] == 0.4
    assert kwargs["rewards"]["track_lin_vel_xy_exp"] == cfg.rewards["track_lin_vel_xy_exp"], "the others stay"
    assert kwargs["commands"]["base_velocity"].ranges.lin_vel_x == (-0.5, 1.5), "a tuple field stays a tuple"
    assert cfg.rewards["feet_air_time"].weight == 0.25, "the default is not changed in place"
    assert cfg.replace(**kwargs).episode_length_s == 10.0
    for bad, message in [("env.episode_lenght_s=10", "ManagerBasedRLEnvCfg has no field 'episode_lenght_s'"),
                         ("env.episode_length_s=long", "expected float"),
                         ("env.scene.decimation=2.5", "expected int"),
                         ("env.rewards.alive.weight=2.0", "no key 'alive' in ManagerBasedRLEnvCfg.rewards"),
                         ("env.scene.sim_dt.x=1", "ManagerBasedRLEnvCfg.scene.sim_dt is a value, not a section"),
                         ("env.num_observations=3", "follow from the task's terms and its MJCF")]:
        with pytest.raises(FleetlabError, match=message):
            env_overrides(cfg, [bad])


def test_agent_picks_one_of_a_tasks_configs():
    entry = resolve("Isaac-Velocity-Flat-Unitree-Go1-v0")
    assert agent_libraries(entry) == ["rsl_rl", "rl_games", "skrl", "brax"]
    assert agent_cfg(entry, "rsl_rl")["actor"]["obs_normalization"] is True
    for name in ("rsl_rl_isaaclab", "rsl_rl_isaaclab_cfg_entry_point"):  # ours, and Isaac Lab's spelling
        cfg = agent_cfg(entry, "rsl_rl", name)
        assert cfg["actor"]["obs_normalization"] is False and cfg["critic"]["obs_normalization"] is False
    assert agent_cfg(entry, "rsl_rl", "rsl_rl_cfg_entry_point")["actor"]["obs_normalization"] is True
    with pytest.raises(FleetlabError, match="has no skrl agent config 'rsl_rl_isaaclab'"):
        agent_cfg(entry, "skrl", "rsl_rl_isaaclab")


def test_list_shows_sizes_physics_and_configs():
    result = run_cmd([PYTHON, "-m", "fleetlab", "list"], REPO, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    go1 = out[out.index("Fleet-Go1-Flat-v0 (alias"):]
    assert "observations 48, actions 12; physics: jax, warp" in go1
    assert "libraries: rsl_rl, rl_games, skrl, brax; other agent configs (--agent): rsl_rl_isaaclab" in go1
    humanoid = out[out.index("Fleet-Humanoid-v0"):]
    assert "observations 87, actions 21; physics: jax, warp" in humanoid


@pytest.mark.slow
def test_two_processes_write_params_with_both_overrides(tmp_path):
    """Isaac Lab's torchrun command with env. and agent. overrides: every rank's env takes the env overrides (all
    reward weights zero: the return averaged over both ranks is exactly 0), and rank 0 writes both configs as run."""
    script = os.path.join(REPO, "scripts", "reinforcement_learning", "rsl_rl", "train.py")
    zero = [f"env.rewards.{term}.weight=0" for term in ("alive", "terminating", "pole_pos", "cart_vel", "pole_vel")]
    proc = torchrun(2, [script, "--task=Isaac-Cartpole-v0", "--headless", "--distributed", "--num_envs=32",
                        "--max_iterations=5", "env.episode_length_s=1.0", *zero, "agent.num_steps_per_env=24",
                        "--logger", "wandb", "--log_project_name", "fleetlab-test"],
                    cwd=tmp_path, timeout=600, env_extra={"WANDB_MODE": "offline", "WANDB_SILENT": "true"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run_dir(tmp_path, "rsl_rl", "cartpole")
    with open(os.path.join(run_dir, "params", "env.yaml")) as f:
        env = yaml.safe_load(f)
    with open(os.path.join(run_dir, "params", "agent.yaml")) as f:
        agent = yaml.safe_load(f)
    assert env["episode_length_s"] == 1.0 and env["world_size"] == 2 and env["num_envs_per_rank"] == 32
    assert env["physics_impl"] == "jax" and env["task"] == "Fleet-Cartpole-v0"
    assert env["rewards"]["alive"]["weight"] == 0.0 and env["scene"]["sim_dt"] == pytest.approx(1 / 120)
    assert env["rewards"]["alive"]["func"] == "fleetlab.mdp.rewards:is_alive", "terms named as Isaac Lab writes them"
    assert agent["num_steps_per_env"] == 24 and agent["max_iterations"] == 5
    with open(os.path.join(run_dir, "summary.json")) as f:
        final = yaml.safe_load(f)["final"]
    assert final["Train/mean_reward"] == 0.0 and 0 < final["Train/mean_episode_length"] <= 60, final
    # rsl_rl's own wandb writer, on rank 0 only (its folder is the working directory's wandb/)
    runs = glob.glob(os.path.join(tmp_path, "**", "offline-run-*", "*.wandb"), recursive=True)
    assert len(runs) == 1, runs
    with open(runs[0], "rb") as f:
        record = f.read()
    assert b"fleetlab-test" in record and b"Train/mean_reward" in record
