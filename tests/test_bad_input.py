"""A user's mistake is one line, `fleetlab: error: ...`, exit code 2, no traceback; a bug keeps its traceback.
Checkpoints are read without running code from them."""

import json
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
BRAX_TRAIN = ["-m", "fleetlab", "train", "--library", "brax", *SMALL]
RL_GAMES_TRAIN = ["-m", "fleetlab", "train", "--library", "rl_games", *SMALL]
BROKEN = [*TRAIN, "--import", "broken_tasks", "--max_iterations", "1"]
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
    "unknown env dict key": ([*TRAIN, "env.rewards.balance.weight=2.0"], "no key 'balance' in"),
    "neither agent. nor env.": ([*TRAIN, "sim.dt=0.1"], "must look like agent.<key.path>=<value> or env."),
    "unknown agent config": ([*TRAIN, "--agent", "rsl_rl_fast"], "has no rsl_rl agent config 'rsl_rl_fast'"),
    "another library's agent config": ([*RL_GAMES_PLAY, "--task", "Isaac-Velocity-Flat-Unitree-Go1-Play-v0",
                                        "--agent", "rsl_rl_isaaclab"],
                                       "has no rl_games agent config 'rsl_rl_isaaclab'"),
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
    # ranges, declared beside the config fields (fleetlab.checks)
    "negative episode length": ([*TRAIN, "env.episode_length_s=-1"], "env.episode_length_s=-1.0: must be a number > 0"),
    "zero sim_dt": ([*TRAIN, "env.scene.sim_dt=0"], "env.scene.sim_dt=0.0: must be a number > 0"),
    "zero save_interval": ([*TRAIN, "agent.save_interval=0"], "agent.save_interval=0 must be an integer >= 1"),
    "zero minibatches": ([*TRAIN, "agent.algorithm.num_mini_batches=0"],
                         "agent.algorithm.num_mini_batches=0 must be an integer >= 1"),
    "brax zero minibatches": ([*BRAX_TRAIN, "agent.ppo.num_minibatches=0"],
                              "agent.ppo.num_minibatches=0 must be an integer >= 1"),
    "negative rollout": ([*TRAIN, "agent.num_steps_per_env=-4"], "agent.num_steps_per_env=-4 must be an integer >= 1"),
    "derived num_observations": ([*TRAIN, "env.num_observations=3"],
                                 "the observation and action sizes follow from the task's terms and its MJCF"),
    "missing MJCF": ([*TRAIN, "env.scene.xml_path=/no/such.xml"],
                     "env.scene.xml_path='/no/such.xml': must be the path of an existing"),
    # a task config's mistakes, caught when the env is built (tests/mp/broken_tasks.py), naming the task and term
    "MJCF MuJoCo cannot load": ([*BROKEN, "--task", "Broken-Mjcf-v0"],
                                "task 'Broken-Mjcf-v0': MuJoCo cannot load '"),
    "integrator MJX cannot step": ([*BROKEN, "--task", "Broken-Integrator-v0"],
                                   "task 'Broken-Integrator-v0': MJX's jax implementation does not support the "
                                   "MJCF's integrator=\"implicit\": use <option integrator=\"implicitfast\">"),
    "action terms short of actuators": ([*BROKEN, "--task", "Broken-Actuators-v0"],
                                        "task 'Broken-Actuators-v0': the action terms drive 4 actuators"),
    "observation of the wrong shape": ([*BROKEN, "--task", "Broken-ObsShape-v0"],
                                       "task 'Broken-ObsShape-v0', observation term 'policy/alive': is_alive must "
                                       "return a 1-D float array for one env, but returns shape () float32"),
    "term params that do not fit": ([*BROKEN, "--task", "Broken-Signature-v0"],
                                    "task 'Broken-Signature-v0', reward term 'pole_pos': joint_pos_target_l2(env, "
                                    "**params) does not fit its params ['goal']"),
    "missing joint name": ([*BROKEN, "--task", "Broken-JointName-v0"],
                           "task 'Broken-JointName-v0', reward term 'pole_pos': no joints named 'cart_to_pol'"),
    "missing sensor body": ([*BROKEN, "--task", "Broken-BodyName-v0"],
                            "task 'Broken-BodyName-v0', termination term 'base_contact': no bodies of sensor "
                            "'contact_forces' named 'torso'"),
    "reward of the wrong shape": ([*BROKEN, "--task", "Broken-RewardDtype-v0"],
                                  "task 'Broken-RewardDtype-v0', reward term 'pole_pos': joint_pos_rel must return a "
                                  "float scalar for one env, but returns shape (2,) float32"),
    "brax None default typed": ([*BRAX_TRAIN, "agent.ppo.learning_rate_schedule=7"],
                                "agent.ppo.learning_rate_schedule='7' must be one of 'ADAPTIVE_KL', 'NONE'"),
    "max_iterations 0 override": ([*TRAIN, "agent.max_iterations=0"], "agent.max_iterations=0 must be an integer >= 1"),
    # numeric flags
    "huge seed": ([*TRAIN, "--seed", "99999999999999999999999"], "--seed: must be an integer in 0..4294967295"),
    "rl_games negative seed": ([*RL_GAMES_TRAIN, "--seed", "-1"], "--seed: must be an integer in 0..4294967295"),
    "huge num_envs": ([*TRAIN, "--num_envs", "99999999999999999999"], "--num_envs: must be at most 2147483647"),
    "num_envs beyond memory": ([*TRAIN, "--num_envs", "1000000000"], "--num_envs 1000000000 needs about"),
    "negative dist_timeout": ([*TRAIN, "--dist_timeout", "-5"], "--dist_timeout: must be a positive number, got -5"),
    "empty --import": ([*TRAIN, "--import", ""], "--import '': give an absolute module name"),
    "relative --import": ([*TRAIN, "--import", ".relative"], "--import '.relative': give an absolute module name"),
    # launch and bench
    "launch port out of range": (["-m", "fleetlab", "launch", "--master_port", "99999", "--", "train"],
                                 "--master_port/--master-port: must be a port number in 1..65535, got 99999"),
    "launch endpoint without port": (["-m", "fleetlab", "launch", "--rdzv_endpoint", "localhost", "--", "train"],
                                     "--rdzv_endpoint must be HOST:PORT, got 'localhost'"),
    "bench on a GPU that is not there": (["-m", "fleetlab", "bench", "train", "--device", "cuda", "--out", "bench_out"],
                                         "--device cuda: no GPU is visible here (use --device cpu)"),
    "bench --json under a file": (["-m", "fleetlab", "bench", "env", "--num_envs", "16", "--json", "{rsl_rl}/out.json"],
                                  "cannot write --json"),
    # file system
    "logs is a file": ([*TRAIN, "--max_iterations", "1"], "cannot create the run folder: "),
}
TRAIN_IN_FOLDER_WITH_LOGS_FILE = "logs is a file"


@pytest.fixture(scope="module")
def case_results(files):
    """Every case of CASES run once, one after another in one fresh process (tests/mp/run_cases.py)."""
    root, paths = files
    logs_is_a_file = root / "logs_is_a_file"
    logs_is_a_file.mkdir()
    (logs_is_a_file / "logs").write_text("not a folder")
    cases = [[case, str(logs_is_a_file if case == TRAIN_IN_FOLDER_WITH_LOGS_FILE else root),
              [a.format(**paths) for a in args]] for case, (args, _) in CASES.items()]
    (root / "cases.json").write_text(json.dumps(cases))
    result = run_cmd([PYTHON, os.path.join(REPO, "tests", "mp", "run_cases.py"), str(root / "cases.json"),
                      str(root / "results.json")], root, timeout=900,
                     env_extra={"PYTHONPATH": os.pathsep.join([os.path.join(REPO, "src"),
                                                               os.path.join(REPO, "tests", "mp")])})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads((root / "results.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_exit_2(files, case_results, case):
    root, _ = files
    _, message = CASES[case]
    result = case_results[case]
    lines = [line for line in result["stderr"].splitlines() if line.strip()]
    assert result["code"] == 2, result["stdout"][-2000:] + result["stderr"][-3000:]
    assert "Traceback" not in result["stderr"], result["stderr"][-3000:]
    assert len(lines) == 1 and lines[0].startswith("fleetlab: error: "), result["stderr"][-3000:]
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



def one_line_error(result, message: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("fleetlab: error: "), result.stderr[-3000:]
    assert message in lines[0], lines[0]


def in_mount_namespace(script: str) -> list[str]:
    """`script` run by sh in a user + mount namespace of its own, where it may mount a tmpfs (read-only, or a tiny
    one that fills up) over a folder: a real read-only or full file system, without root, undone when it exits."""
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script]


FLEETLAB = f"{PYTHON} -m fleetlab"


@pytest.mark.slow
@pytest.mark.parametrize("case,script,message", [
    ("read-only log root",
     "mount -t tmpfs -o ro tmpfs logs && {fleetlab} train --library rsl_rl {small} --max_iterations 1",
     "cannot create the run folder: '{root}/logs/rsl_rl': Read-only file system"),
    ("full disk", "mount -t tmpfs -o size=256k tmpfs logs && {fleetlab} train --library rsl_rl {small} "
     "--max_iterations 50 agent.save_interval=1", "No space left on device (the disk is full"),
    ("play in a read-only run folder", "mount --bind {run} {run} && mount -o remount,bind,ro {run} {run} && "
     "{fleetlab} play --library rsl_rl {small} --checkpoint {model}", "cannot write play's results"),
])
def test_file_system_errors_are_one_line(files, tmp_path, case, script, message):
    root, paths = files
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    model = paths["rsl_rl"]
    fill = dict(fleetlab=FLEETLAB, small=" ".join(SMALL), run=os.path.dirname(model), model=model, root=work)
    result = run_cmd(in_mount_namespace(script.format(**fill)), work, timeout=300)
    one_line_error(result, message.format(**fill))


def test_checkpoints_are_readable_by_the_group(files):
    _, paths = files
    mask = os.umask(0)
    os.umask(mask)
    assert os.stat(paths["rsl_rl"]).st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize("library,extra", [("rl_games", "rl-games"), ("skrl", "skrl"), ("brax", "brax"),
                                           ("rsl_rl", "rsl-rl")])
def test_a_library_that_is_not_installed_names_its_extra(tmp_path, library, extra):
    # None in sys.modules is Python's own "this module cannot be imported"
    code = (f"import sys; sys.modules[{library!r}] = None; from fleetlab.cli import main; "
            f"sys.exit(main(['train', '--library', {library!r}, '--num_envs', '16', '--device', 'cpu']))")
    result = run_cmd([PYTHON, "-c", code], tmp_path, timeout=300)
    one_line_error(result,
                   f"--library {library} needs {library}, which is not installed: pip install 'fleetlab[{extra}]'")
    assert not os.path.exists(tmp_path / "logs")


def test_gymnasium_ids_are_registered_by_import_fleetlab_alone(tmp_path):
    """In a fresh process (conftest imports fleetlab.tasks, which would hide a missing registration): the ids exist
    after `import fleetlab` with no JAX and no task imported, gymnasium.make builds the env, a bad num_envs is a
    ValueError, and the list of ids is exactly what fleetlab's tasks register."""
    code = """
import sys, fleetlab, gymnasium
assert "Isaac-Cartpole-v0" in gymnasium.registry and "Fleet-Go1-Flat-v0" in gymnasium.registry
assert "jax" not in sys.modules and not [m for m in sys.modules if m.startswith("fleetlab.tasks")], "imported too much"
env = gymnasium.make("Isaac-Cartpole-v0", num_envs=4)
assert env.unwrapped.num_envs == 4, env
try:
    gymnasium.make("Isaac-Cartpole-v0", num_envs=0)
    raise SystemExit("num_envs=0 accepted")
except ValueError as err:
    assert "num_envs must be a positive integer" in str(err)
from fleetlab.envs.registry import _REGISTRY
from fleetlab.gymnasium_ids import IDS
assert sorted(IDS) == sorted(_REGISTRY), (sorted(IDS), sorted(_REGISTRY))
print("ok")
"""
    result = run_cmd([PYTHON, "-c", code], tmp_path, timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stdout + result.stderr[-3000:]


@pytest.mark.slow
def test_bench_train_defaults_to_the_cpu_without_a_gpu(tmp_path):
    result = run_cmd([PYTHON, "-m", "fleetlab", "bench", "train", "--libraries", "rsl_rl", "--num_envs", "16",
                      "--iterations", "2", "--no_baseline", "--out", "out"], tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = json.load(open(tmp_path / "out" / "bench_train.json"))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [r["device"] for r in rows] == ["cpu"], rows
