#!/usr/bin/env bash
# Train one fine-tune probe (a spec file here) on this machine and read it with the harness:
# passkey at 512..4k (20 samples, the passkey preset, <|endoftext|> in front as in training; pi-b8's
# committed run predates that and was read both ways, see README.md) and perplexity on the Austen parts at 512..4k.
#
#   bash reports/zoo/finetune-probe/run_probe.sh pi-b8      # writes results/pi-b8.*; resumes after a kill
set -euo pipefail
cd "$(dirname "$0")/../../.."
name=$1
here=reports/zoo/finetune-probe
work=${PROBE_WORK:-runs/finetune-probe}
spec_name=$(python -c "import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))['name'])" "$here/$name.yaml")
mkdir -p "$here/results"
coca-eval zoo train "$here/$name.yaml" --out "$work" 2>&1 | tail -n 3 > "$here/results/$name.train.out"
cp "$work/$spec_name/model/zoo.json" "$here/results/$name.zoo.json"
cp "$work/$spec_name/train_log.jsonl" "$here/results/$name.train_log.jsonl"
coca-eval passkey --model "$work/$spec_name/model" --preset passkey --bos always --lengths 512..4k --samples 20 \
  --output "$here/results/$name.passkey.json"
coca-eval ppl --model "$work/$spec_name/model" --dataset zoo:outside:parts --num-docs 4 --doc-tokens 4096 \
  --lengths 512..4k --stride 512 --output "$here/results/$name.ppl.json"
