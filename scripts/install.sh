#!/usr/bin/env bash
# Create ./.venv and install coca-eval into it (editable), with optional extras: dev, kernels, vllm, opencompass.
#
#   bash scripts/install.sh          # the tool
#   bash scripts/install.sh dev      # the tool + pytest/ruff
#
# Torch: on a machine without an NVIDIA GPU, a CPU build is installed first (a local wheel that pip's
# find-links offers, else PyTorch's CPU index), so no CUDA wheels are downloaded. With a GPU, the normal
# dependency resolution picks a CUDA torch from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
venv="${VENV:-.venv}"
python="${PYTHON:-python3}"
cpu_torch="${COCA_EVAL_CPU_TORCH:-torch==2.13.0}"

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip() { "$venv/bin/python" -m pip --disable-pip-version-check -q "$@"; }

# A torch older than the floor in pyproject.toml (2.6: safe weights_only loading) counts as none, so a CPU
# machine gets a CPU build rather than whatever PyPI resolves when pip upgrades it below.
torch_floor_ok='import sys, torch; sys.exit(tuple(map(int, torch.__version__.split(".")[:2])) < (2, 6))'
if ! "$venv/bin/python" -c "$torch_floor_ok" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "install: NVIDIA GPU found; torch comes from PyPI (CUDA build)"
  elif pip install --no-deps --no-index "$cpu_torch" 2>/dev/null; then
    pip install "$cpu_torch"  # the local wheel is in place; this adds its dependencies from the index
    echo "install: CPU machine; installed local wheel $cpu_torch"
  else
    echo "install: CPU machine; installing torch from PyTorch's CPU index"
    pip install "torch>=2.6" --index-url https://download.pytorch.org/whl/cpu
  fi
fi
pip install -e ".${extras:+[$extras]}"
echo "install: done ($("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
