#!/usr/bin/env bash
# How many samples the committed 100-sample passkey runs' decisions would have needed under
# `--samples auto` (threshold 0.5, target width 0.2): writes reports/zoo/sequential.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
python -m coca_eval.sequential_replay reports/zoo/runs/*_passkey.json.gz --threshold 0.5 --target-width 0.2 \
  --regenerate "bash reports/zoo/sequential.sh" > reports/zoo/sequential.md
