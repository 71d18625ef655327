#!/usr/bin/env bash
# Train the whole zoo on one GPU, side by side, then store it in the package (fp16 weights):
#
#   bash scripts/zoo_train_gpu.sh [OUT]        (default OUT: runs/zoo)
#
# The same recipe and batches as `coca-eval zoo train all` on a CPU; the six from-scratch models run
# at once (start the CUDA MPS daemon first to let their small kernels overlap), then the fine-tunes in
# the order their bases need. Each run resumes from its checkpoint when the script is rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/zoo}
mkdir -p "$out"
train() { python3 -m coca_eval zoo train "$1" --out "$out" --device cuda > "$out/$1.train.out" 2>&1; }
pids=()
for name in $(python3 -c "from coca_eval.zoo.catalog import TRAIN_ORDER; print(*TRAIN_ORDER)"); do
  train "$name" & pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
train zoo-rope-ft-coca & a=$!
train zoo-rope-ft-pi & b=$!
wait "$a"; wait "$b"
train zoo-rope-ft-coca-pi
python3 -m coca_eval zoo ship all --from "$out"
