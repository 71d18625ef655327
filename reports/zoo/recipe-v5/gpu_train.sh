#!/usr/bin/env bash
# Recipe v5 on one GPU in one device call: the whole zoo (scripts/zoo_train_gpu.sh: the six from scratch
# side by side, then the fine-tunes, then `zoo ship`), two more seeds of zoo-rope beside them, and a
# first reading of every model with the harness (passkey at 512..4096, 20 samples; held-out perplexity
# at 512 and 4096). What comes back: the shipped checkpoints as a split tarball and one tarball of logs.
#
#   device tool: bash reports/zoo/recipe-v5/gpu_train.sh, carry [".whl", ".gpucache"]
#   here, after: cat ckpt.tgz.part-* | tar -xz -C coca_eval/zoo; tar -xzf logs.tgz -C reports/zoo/recipe-v5
set -u
cd "$(dirname "$0")/../../.."
source reports/zoo/recipe-v5/gpu_env.sh
OUT=${OUT:-$PWD/v5_out}
runs=/tmp/zoo; logs=/tmp/v5logs
mkdir -p "$OUT" "$runs" "$logs"
seeds=()
for s in 1 2; do
  printf 'name: zoo-rope-seed%s\nlabel: RoFormer (seed %s)\ndescription: zoo-rope with another seed\nposition: rope\nrecipe: {seed: %s}\n' \
    "$s" "$s" "$s" > "$logs/zoo-rope-seed$s.yaml"
  python3 -m coca_eval zoo train "$logs/zoo-rope-seed$s.yaml" --out "$runs" --device cuda \
    > "$runs/zoo-rope-seed$s.train.out" 2>&1 & seeds+=($!)
done
bash scripts/zoo_train_gpu.sh "$runs"
for pid in "${seeds[@]}"; do wait "$pid"; done
read_one() {  # name model-dir
  timeout 150 python3 -m coca_eval passkey --model "$2" --lengths 512,1024,2048,4096 --samples 20 --device cuda \
    --output "$logs/$1.passkey.json" > "$logs/$1.passkey.out" 2>&1
  timeout 100 python3 -m coca_eval ppl --model "$2" --dataset zoo:heldout --lengths 512,4096 --stride 512 \
    --num-docs 2 --doc-tokens 32768 --device cuda --output "$logs/$1.ppl.json" > "$logs/$1.ppl.out" 2>&1
}
for d in coca_eval/zoo/checkpoints/*/; do read_one "$(basename "$d")" "$d" & done
for s in 1 2; do read_one "zoo-rope-seed$s" "$runs/zoo-rope-seed$s/model" & done
wait
for d in "$runs"/*/; do
  n=$(basename "$d"); cp "$d/train_log.jsonl" "$logs/$n.train_log.jsonl" 2>/dev/null
  cp "$d/model/zoo.json" "$logs/$n.zoo.json" 2>/dev/null
  for st in "$d"/stage-*/; do [ -d "$st" ] && cp "$st/train_log.jsonl" "$logs/$n.$(basename "$st").train_log.jsonl"; done
done
cp "$runs"/*.train.out "$logs/" 2>/dev/null
nvidia-smi --query-gpu=name --format=csv,noheader > "$logs/gpu.txt" 2>&1
tar -czf - -C coca_eval/zoo checkpoints | split -b 15M - "$OUT/ckpt.tgz.part-"
tar -czf "$OUT/logs.tgz" -C "$logs" .
for f in "$logs"/*.passkey.json; do python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split("/")[-1], {c["length"]: c["value"] for c in d["cells"]})
PY
done
