#!/usr/bin/env bash
# The runs behind reports/analyses/, one at a time (each reads 2 documents unless said otherwise).
# Usage: reports/analyses/run.sh OUT_DIR   (then: coca-eval report OUT_DIR/*.json --format md --format html)
set -euo pipefail
out=${1:-runs/analyses}
ce() { coca-eval "$@"; }
zoo=(--model zoo-rope --model zoo-coca-slack --dataset zoo:heldout)

ce analyze frequencies --model gemma3-270m --lengths 2048 --output "$out/frequencies-gemma.json"
ce analyze frequencies --model smollm2-135m --lengths 2048 --output "$out/frequencies-smollm2.json"
ce analyze frequencies "${zoo[@]}" --lengths 512 --output "$out/frequencies-zoo.json"
ce analyze angles "${zoo[@]}" --lengths 512 --output "$out/angles-zoo.json"
ce analyze angles --model smollm2-135m --lengths 2048 --output "$out/angles-smollm2.json"
ce analyze angles --model gemma3-270m --lengths 2048 --output "$out/angles-gemma.json"
ce analyze decay "${zoo[@]}" --lengths 512 --output "$out/decay-zoo.json"
ce analyze decay --model smollm2-135m --lengths 2048 --output "$out/decay-smollm2.json"
ce analyze decay --model gemma3-270m --lengths 2048 --output "$out/decay-gemma.json"
geometry=(--head-dim 128 --trained-length 4096 --lengths 4096,16384)  # no model: the closed forms alone
ce analyze decay "${geometry[@]}" --rope none --rope linear:4 --rope ntk:4 --rope dynamic:4 --rope yarn:4 \
  --output "$out/decay-geometry.json"
ce analyze decay "${geometry[@]}" --rope-fraction 0.75 --output "$out/decay-geometry-prope.json"
ce analyze attention "${zoo[@]}" --lengths 512..4k --output "$out/attention-zoo.json"
ce analyze attention --model smollm2-135m --lengths 8192,16384 --num-docs 1 --output "$out/attention-smollm2.json"
