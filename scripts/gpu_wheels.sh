#!/usr/bin/env bash
# Download, on this (CPU, online) machine, the wheels that the GPU machine lacks into ./.whl (git-ignored),
# for scripts/gpu_suite.sh to install there. The GPU image has torch, transformers, Triton, pytest, numpy,
# pandas, scipy, matplotlib, rich, click, pyyaml, safetensors, jinja2, tabulate and huggingface_hub, but
# not pydantic (which coca_eval imports) or platformdirs; it runs Python 3.12 and cannot reach a registry.
#
#   bash scripts/gpu_wheels.sh        # ~3 MiB into .whl/; then carry ".whl" in the device call
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl pydantic==2.14.3 pydantic_core==2.50.4 annotated_types==0.8.0 typing_inspection==0.4.5 \
  typing_extensions==4.16.0 platformdirs==4.14.7
ls .whl
