"""Return curves of the H200 training runs (benchmarks/device_tasks.py output, and benchmarks/device_go1.py's one
run per file) as one PNG and a Markdown table.

    python benchmarks/plot_tasks.py RUNS.json... --out FOLDER
"""

from __future__ import annotations

import argparse
import json
import os

# the mean episode return (raw rewards, before any shaping) each library logs to TensorBoard
RETURN_TAG = {"rsl_rl": "Train/mean_reward", "rl_games": "rewards/iter", "skrl": "Reward / Total reward (mean)"}
STEPS_PER_ITERATION = {("Isaac-Humanoid-v0", "rsl_rl"): 32, ("Isaac-Humanoid-v0", "rl_games"): 32,
                       ("Isaac-Humanoid-v0", "skrl"): 1, ("Isaac-Ant-v0", "rsl_rl"): 32,
                       ("Isaac-Ant-v0", "rl_games"): 16, ("Isaac-Ant-v0", "skrl"): 1,
                       ("Isaac-Velocity-Flat-Unitree-Go1-v0", "rsl_rl"): 24,
                       ("Isaac-Velocity-Flat-Unitree-Go1-v0", "rl_games"): 24,
                       ("Isaac-Velocity-Flat-Unitree-Go1-v0", "skrl"): 1}


def env_steps(run: dict, step: int) -> float:
    """TensorBoard's step is an iteration (rsl_rl from 0, rl_games' rewards/iter from 1) or a timestep (skrl)."""
    iterations = step + 1 if run["library"] == "rsl_rl" else step
    return iterations * STEPS_PER_ITERATION[(run["task"], run["library"])] * run["num_envs"]


def latest_runs(paths: list[str]) -> list[dict]:
    """One run per (task, library): a later file's complete run replaces an earlier one."""
    runs = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for run in data.get("runs", [data]):  # device_go1.py: one run (a variant) per file, its rc is train_rc
            run = {**run, "rc": run.get("rc", run.get("train_rc")), "label": run.get("variant", run["library"])}
            if "curves" in run and (run["rc"] == 0 or (run["task"], run["label"]) not in runs):
                runs[(run["task"], run["label"])] = {**run, "commit": data["commit"], "file": os.path.basename(path)}
    return [runs[k] for k in sorted(runs)]


def table(runs: list[dict]) -> str:
    lines = ["| task | run | envs | env steps | return at the end | episode length | training FPS | wall s (JIT s) "
             "| note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        curve = r["curves"][RETURN_TAG[r["library"]]]
        step, _, ret = curve[-1]
        length = next((c[-1][2] for t, c in r["curves"].items() if "episode_length" in t), None)
        perf = r.get("perf") or {}
        fps = perf.get("train_fps") or next((c[-1][2] for t, c in r["curves"].items() if t == "Perf/total_fps"), None)
        note = "stopped by the time guard (SIGTERM, checkpoint)" if r["rc"] else ""
        jit = f" ({perf['jit_s']:.0f})" if perf.get("jit_s") else ""
        wall = f"{r.get('train_wall_s', r.get('wall_s')):.0f}" + jit
        lines.append(f"| {r['task']} | {r['label']} | {r['num_envs']} | {env_steps(r, step) / 1e6:.1f}M | {ret:.1f} | "
                     f"{'' if length is None else f'{length:.0f}'} | {'' if fps is None else f'{fps / 1e3:.0f}k'} "
                     f"| {wall} | {note} |")
    return "\n".join(lines) + "\n"


def plot(runs: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({r["task"] for r in runs})
    fig, axes = plt.subplots(1, len(tasks), figsize=(6 * len(tasks), 4))
    for ax, task in zip(axes if len(tasks) > 1 else [axes], tasks):
        for r in (r for r in runs if r["task"] == task):
            curve = r["curves"][RETURN_TAG[r["library"]]]
            ax.plot([env_steps(r, s) / 1e6 for s, _, _ in curve], [v for _, _, v in curve], label=r["label"])
        ax.set_title(f"{task}, one H200, {runs[0]['num_envs']} envs")
        ax.set_xlabel("env steps (M)")
        ax.set_ylabel("mean episode return")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    runs = latest_runs(args.files)
    plot(runs, os.path.join(args.out, "returns.png"))
    with open(os.path.join(args.out, "returns.md"), "w") as f:
        f.write(table(runs))
    print(table(runs))


if __name__ == "__main__":
    main()
