#!/usr/bin/env bash
# Create .venv at the repo root and install fleetlab with every library into it. Idempotent: a second run with
# the same pyproject.toml does nothing. torch goes in FIRST (2.13.0 takes the CPU wheel on a CPU-only machine;
# an open `torch` requirement would pull a multi-GB CUDA build). With an NVIDIA GPU, JAX gets its CUDA plugin.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
has_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then has_gpu=1; fi
# MuJoCo Warp (the default physics on a GPU) on GPU machines, and wherever the tests run (FLEETLAB_WARP=1, set by
# scripts/dev/test.sh): the tests compare it with MuJoCo on the CPU. A CPU-only training run does not need it.
extras="all,dev"
if [ "$has_gpu" = 1 ] || [ "${FLEETLAB_WARP:-0}" = 1 ]; then extras="$extras,warp"; fi
want="$(cat pyproject.toml scripts/dev/bootstrap.sh | sha256sum | cut -c1-16)-gpu$has_gpu-$extras"
stamp=.venv/.fleetlab-bootstrap
if [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then exit 0; fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Videos render offscreen through OSMesa where there is no GPU (best effort: needs root and apt).
if ! ldconfig -p 2>/dev/null | grep -q libOSMesa && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq libosmesa6 >/dev/null) || echo "[bootstrap] could not install libosmesa6: videos need MUJOCO_GL=egl"
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/python -m pip install -q "torch==2.13.0"
if [ "$has_gpu" = 1 ]; then .venv/bin/python -m pip install -q "jax[cuda13]"; fi
.venv/bin/python -m pip install -q -e ".[$extras]"
echo "$want" > "$stamp"
echo "[bootstrap] .venv ready ($(.venv/bin/python -c 'import torch, jax; print("torch", torch.__version__, "jax", jax.__version__)'))"
