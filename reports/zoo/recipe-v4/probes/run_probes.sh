#!/usr/bin/env bash
# Train every probe spec given (default: all *.yaml here) side by side on one GPU, then read each
# one's held-out perplexity at 512..4096 (S = 512, the 2 held-out books at 32k tokens each, and 8
# parts of the Austen novels at 8k tokens each) and its passkey accuracy inside the window. Usage: run_probes.sh OUTDIR [SPEC.yaml ...]; DEVICE (default cuda) and BUDGET_S (seconds
# before unfinished runs are stopped, default 520) from the environment.
set -u
out=$1; shift
here=$(dirname "$0")
specs=("$@"); [ ${#specs[@]} -gt 0 ] || specs=("$here"/*.yaml)
device=${DEVICE:-cuda}
mkdir -p "$out"
one() {
  local spec=$1 key; key=$(basename "$spec" .yaml)
  local name; name=$(python3 -c "import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))['name'])" "$spec")
  python3 -m coca_eval zoo train "$spec" --out "$out/runs" --device "$device" > "$out/$key.train.out" 2>&1 || return
  cp "$out/runs/$name/model/zoo.json" "$out/$key.zoo.json"
  cp "$out/runs/$name/train_log.jsonl" "$out/$key.train_log.jsonl"
  python3 -m coca_eval ppl --model "$out/runs/$name/model" --dataset zoo:heldout --lengths 512,1024,2048,4096 \
    --stride 512 --num-docs 2 --doc-tokens 32768 --device "$device" --output "$out/$key.json" > "$out/$key.ppl.out" 2>&1
  python3 -m coca_eval ppl --model "$out/runs/$name/model" --dataset zoo:outside:parts --lengths 512,4096 \
    --stride 512 --num-docs 8 --doc-tokens 8192 --device "$device" --output "$out/$key.outside.json" > "$out/$key.outside.out" 2>&1
  python3 -m coca_eval passkey --model "$out/runs/$name/model" --lengths 256,512 --samples 20 \
    --device "$device" --output "$out/$key.passkey.json" > "$out/$key.passkey.out" 2>&1
}
export -f one; export out device
for spec in "${specs[@]}"; do OMP_NUM_THREADS=1 timeout "${BUDGET_S:-520}" bash -c "one $spec" & done
wait
