#!/usr/bin/env bash
# The whole test suite (CPU only; multi-process tests launch real torchrun/gloo processes). Extra flags go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
FLEETLAB_WARP=1 bash scripts/dev/bootstrap.sh  # the tests also run MuJoCo Warp on the CPU
export GIT_PYTHON_REFRESH=quiet JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
exec .venv/bin/python -m pytest tests "$@"
