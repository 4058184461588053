#!/usr/bin/env bash
# Install fleetlab with ONE library's extra in a fresh venv, as a new user would, and train Cartpole for 2 iterations
# with that library: proves the core dependencies are complete and each extra's name resolves (run by .ci/run).
# The venvs live in .venv-extras/<extra>/ (ignored by git) and are made anew on every run; the local wheels keep
# that to about a minute each. Each is about 2 GB, so a venv that passed is removed before the next is made: CI
# once ran out of disk while installing, and four kept venvs took 7.8 GB. A failed one stays, to
# be looked at. Usage: bash scripts/dev/check_extras.sh [extra ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python=${PYTHON:-python3}
root=$PWD
export PIP_DISABLE_PIP_VERSION_CHECK=1 GIT_PYTHON_REFRESH=quiet JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
extras=("$@")
[ ${#extras[@]} -gt 0 ] || extras=(rsl-rl rl-games skrl brax)
for extra in "${extras[@]}"; do
  venv=.venv-extras/$extra
  rm -rf "$venv"
  "$python" -m venv "$venv"  # the pip that venv brings (not upgraded): what a user has
  start=$(date +%s)
  "$venv/bin/python" -m pip install -q "torch==2.13.0" 2>&1 | { grep -v "^WARNING: Location" || true; }  # first: see bootstrap.sh
  "$venv/bin/python" -m pip install -q -e ".[$extra]" 2>&1 | { grep -v "^WARNING: Location" || true; } | tee "$venv/pip.log"
  if grep -q "does not provide the extra" "$venv/pip.log"; then
    echo "[check_extras] pip did not find the extra '$extra'" >&2
    exit 1
  fi
  case $extra in
    rsl-rl) runs=("--library rsl_rl") ;;
    rl-games) runs=("--library rl_games") ;;
    skrl) runs=("--library skrl" "--library skrl --ml_framework jax") ;;
    brax) runs=("--library brax") ;;
  esac
  for run in "${runs[@]}"; do
    dir=$(mktemp -d)
    # shellcheck disable=SC2086  # $run holds several flags
    (cd "$dir" && "$root/$venv/bin/fleetlab" train $run --task Isaac-Cartpole-v0 --num_envs 32 --max_iterations 2 \
      --device cpu > train.log 2>&1) || { cat "$dir/train.log" >&2; echo "[check_extras] .[$extra]: train $run failed" >&2; exit 1; }
    grep -q "\[fleetlab\] done in" "$dir/train.log" || { cat "$dir/train.log" >&2; exit 1; }
    rm -rf "$dir"
  done
  rm -rf "$venv"
  echo "[check_extras] .[$extra] alone: install + 2-iteration train OK ($(( $(date +%s) - start )) s)"
done
