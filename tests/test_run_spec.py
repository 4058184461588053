"""rl/run.py: the parsed flags become one typed Run, resolved once: every physics setting a typed config field set
by the task, by `env.physics.<name>=` and by `--physics_<name>` (which wins), and no argparse Namespace kept."""

import argparse
import dataclasses
import subprocess

import pytest
from conftest import PYTHON, REPO

from fleetlab.errors import FleetlabError
from fleetlab.rl.args import parse
from fleetlab.rl.run import resolve_run
from fleetlab.sim.options import PhysicsOptions


def _run(*argv: str, library: str = "rsl_rl"):
    return resolve_run(library, parse(library, argv=list(argv)), play=False)


def test_the_run_is_typed_and_holds_no_namespace():
    run = _run("--device", "cpu", "--max_iterations", "3", "--experiment_name", "mine", "--threads", "2")
    assert not [f.name for f in dataclasses.fields(run) if isinstance(getattr(run, f.name), argparse.Namespace)]
    assert (run.device, run.max_iterations, run.threads) == ("cpu", 3, 2)
    assert run.options == {"experiment_name": "mine", "run_name": None}  # rsl_rl's own flags
    assert run.agent_cfg["experiment_name"] == "mine" and run.agent_cfg["max_iterations"] == 3
    assert _run("--ml_framework", "jax", library="skrl").framework == "jax"


def test_physics_settings_come_from_the_task_then_env_overrides_then_flags():
    assert _run("--task", "Isaac-Humanoid-v0").env_cfg.physics == PhysicsOptions(contacts_per_env=16,
                                                                                 constraints_per_env=96)
    run = _run("--task", "Isaac-Humanoid-v0", "env.physics.contacts_per_env=32", "env.physics.graph_mode=WARP",
               "--physics_contacts_per_env", "24", "--physics_preload", "none", "--physics_rne_every_substep",
               "--physics_impl", "jax")
    assert run.env_cfg.physics == PhysicsOptions(impl="jax", contacts_per_env=24, constraints_per_env=96,
                                                 graph_mode="WARP", preload="none", rne_every_substep=True)


@pytest.mark.parametrize("argv,message", [
    (["env.physics.graph_mode=FAST"], "env.physics.graph_mode='FAST': must be one of"),
    (["env.physics.contacts_per_env=0"], "env.physics.contacts_per_env=0: must be an integer >= 1"),
    (["env.physics.bogus=1"], "no field 'bogus'"),
])
def test_bad_physics_overrides_are_one_line_errors(argv, message):
    with pytest.raises(FleetlabError, match=message):
        _run(*argv)


def test_a_bad_physics_flag_is_a_one_line_error():
    out = subprocess.run([PYTHON, "-m", "fleetlab", "train", "--physics_graph_mode", "FAST"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.startswith("fleetlab: error: argument --physics_graph_mode"), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_repo_keeps_reports_not_logs_archives_or_checkpoints():
    files = subprocess.run(["git", "ls-files", "benchmarks"], cwd=REPO, capture_output=True, text=True).stdout.split()
    assert len(files) < 60, len(files)
    kept = {f.rsplit(".", 1)[-1] for f in files}
    assert kept <= {"md", "py", "sh", "png", "gif"}, kept
