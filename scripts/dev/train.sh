#!/usr/bin/env bash
# The main job: train Cartpole with rsl_rl on this machine (CPU, or cuda:0 if a GPU is present), then play it:
# mean return, % of steps balanced, TorchScript + ONNX export. Extra flags go to `fleetlab train`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bash scripts/dev/bootstrap.sh
export GIT_PYTHON_REFRESH=quiet
.venv/bin/fleetlab train --library rsl_rl --task Isaac-Cartpole-v0 --headless "$@"
.venv/bin/fleetlab play --library rsl_rl --task Isaac-Cartpole-v0 --headless --num_envs 32 --steps 1000
