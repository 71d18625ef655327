#!/usr/bin/env bash
# Every zoo report run of scripts/zoo_reports.sh (all but vllm and report) side by side on one GPU: the
# perplexity steps in two chains, and each passkey shard as its own job. Each run journals every cell or
# sample, so what a time limit cuts off resumes where it stopped (here or on a CPU). Comes back: one
# tarball of reports/zoo/runs.
#
#   device tool (with reports/zoo/runs moved aside, so the tree fits): bash reports/zoo/recipe-v5/gpu_reports.sh,
#   carry [".whl", ".gpucache"]; here, after: tar -xzf runs.tgz -C reports/zoo
set -u
cd "$(dirname "$0")/../../.."
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 DEVICE=cuda
export COCA_EVAL_CACHE=$PWD/.gpucache
OUT=${OUT:-$PWD/reports_out}
mkdir -p "$OUT" /tmp/bin reports/zoo/runs/shards
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/bin:$PATH
printf '#!/bin/sh\nexec python3 -m coca_eval "$@"\n' > /tmp/bin/coca-eval
printf '#!/bin/sh\nexec python3 "$@"\n' > /tmp/bin/python
chmod +x /tmp/bin/coca-eval /tmp/bin/python
nvidia-cuda-mps-control -d 2>/dev/null || true
R=scripts/zoo_reports.sh L=reports/zoo/runs
LIMIT=${LIMIT:-470}
job() { timeout --signal=INT --kill-after=10 "$LIMIT" bash "$R" "$@" > "$L/gpu.$(echo "$*" | tr ' ' _).log" 2>&1; }
job table1 table3_ppl finetune_ppl &
job bar table4_ppl prope &
for s in "table1 table2 8" "table4 table4 2" "finetune finetune 4" "table3 table3 6"; do
  set -- $s
  for k in $(seq 1 "$3"); do job shard_one "$1" "$2" "$k" "$3" & done
done
wait
bash "$R" merge_shards > "$L/gpu.merge.log" 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader > "$L/gpu.txt" 2>&1
tar -czf "$OUT/runs.tgz" -C reports/zoo runs
tail -n 2 "$L"/gpu.*.log
