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
source reports/zoo/recipe-v5/gpu_env.sh
export DEVICE=cuda
OUT=${OUT:-$PWD/reports_out}
mkdir -p "$OUT" /tmp/bin reports/zoo/runs/shards
export PATH=/tmp/bin:$PATH
printf '#!/bin/sh\nexec python3 -m coca_eval "$@"\n' > /tmp/bin/coca-eval
printf '#!/bin/sh\nexec python3 "$@"\n' > /tmp/bin/python
chmod +x /tmp/bin/coca-eval /tmp/bin/python
R=scripts/zoo_reports.sh L=reports/zoo/runs
LIMIT=${LIMIT:-470}
job() { timeout --signal=INT --kill-after=10 "$LIMIT" bash "$R" "$@" > "$L/gpu.$(echo "$*" | tr ' ' _).log" 2>&1; }
job table1 table3_ppl finetune_ppl &
job bar table4_ppl prope &
while read -r methods table count; do
  for k in $(seq 1 "$count"); do job shard_one "$methods" "$table" "$k" "$count" & done
done < <(bash "$R" shard_list)
wait
bash "$R" merge_shards > "$L/gpu.merge.log" 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader > "$L/gpu.txt" 2>&1
tar -czf "$OUT/runs.tgz" -C reports/zoo runs
tail -n 2 "$L"/gpu.*.log
