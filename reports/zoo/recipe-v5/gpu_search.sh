#!/usr/bin/env bash
# Run the retrieval search's configurations side by side on one GPU (CUDA MPS), then read each
# trained model with the harness: held-out perplexity at 512 and 4096 (2 books x 32768 tokens, S = 512)
# and passkey at 512, 1024 and 2048 (20 samples each). Everything lands in one tarball in $OUT.
#
#   device tool: bash reports/zoo/recipe-v5/gpu_search.sh [CONFIGS], carry [".whl", ".gpucache"]
#
# CONFIGS: a file of runs, one per line, "NAME field=value ..." (gpu_search.py's arguments; # comments);
# without it, the ten runs of the recipe-v5 search below.
#
# .whl: bash scripts/gpu_wheels.sh; .gpucache/books: the normalised book texts (the package's cache),
# so the device machine, which reaches no registry, reads the same pinned text.
set -u
cd "$(dirname "$0")/../../.."
source reports/zoo/recipe-v5/gpu_env.sh
OUT=${OUT:-$PWD/search_out}
work=/tmp/search
mkdir -p "$OUT" "$work"
DEADLINE=${DEADLINE:-380}
# name: recipe fields (each run names its batch, steps and passkey share: the shared recipe's defaults
# changed with this search, from batch 8, 2400 steps and a tenth passkey rows; peak 4e-3 throughout)
configs=(
  "v4ctl batch_size=8 steps=2400 passkey_fraction=0.1 every=400"
  "b64pk10 batch_size=64 steps=3000 passkey_fraction=0.1"
  "b64pk25 batch_size=64 steps=3000 passkey_fraction=0.25"
  "b64pk10cp10 batch_size=64 steps=3000 passkey_fraction=0.1 copy_fraction=0.1"
  "b64pk10lr2 batch_size=64 steps=3000 passkey_fraction=0.1 peak_lr=2e-3"
  "b64pk50 batch_size=64 steps=3000 passkey_fraction=0.5"
  "b32pk10 batch_size=32 steps=6000 passkey_fraction=0.1"
  "b8pk10s12k batch_size=8 steps=12000 passkey_fraction=0.1 every=1000"
  "b128pk10 batch_size=128 steps=2000 passkey_fraction=0.1"
  "b16pk25cp25 batch_size=16 steps=2400 passkey_fraction=0.25 copy_fraction=0.25 every=400"
)
if [ $# -ge 1 ]; then mapfile -t configs < <(grep -v '^[[:space:]]*\(#\|$\)' "$1"); fi
for c in "${configs[@]}"; do
  set -- $c; name=$1; shift
  python3 reports/zoo/recipe-v5/gpu_search.py "$@" device=cuda deadline="$DEADLINE" out="$work/$name" \
    > "$work/$name.log" 2>&1 &
done
wait
read_one() {
  local name=$1 m=$work/$1
  [ -f "$m/config.json" ] || return
  python3 -m coca_eval ppl --model "$m" --dataset zoo:heldout --lengths 512,4096 --stride 512 --num-docs 2 \
    --doc-tokens 32768 --device cuda --output "$work/$name.ppl.json" > "$work/$name.ppl.out" 2>&1
  python3 -m coca_eval passkey --model "$m" --bos always --lengths 512,1024,2048 --samples 20 --device cuda \
    --output "$work/$name.passkey.json" > "$work/$name.passkey.out" 2>&1
}
for c in "${configs[@]}"; do set -- $c; read_one "$1" & done
wait
nvidia-smi --query-gpu=name --format=csv,noheader > "$work/gpu.txt" 2>&1
tar -czf "$OUT/search.tgz" -C "$work" --exclude='*.safetensors' .
for c in "${configs[@]}"; do set -- $c; tail -n 3 "$work/$1.log"; done
