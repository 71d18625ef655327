#!/usr/bin/env bash
# Write tests/imported/data/lm_eval_ruler: a real lm-evaluation-harness 0.4.13 output folder that
# tests/imported/test_evaluation_harness.py imports. lm-eval runs in a venv of its own (its pins need not
# agree with ours), on SmolLM2-135M-Instruct as the smollm2-135m preset converts it, on CPU, offline:
# RULER's niah_single_1 (three samples at each of 1k and 2k) and ruler_vt (two at each), chosen by
# document index (lm-eval lists a task's 500 documents per length, shortest length first), with
# --log_samples so every per-sample score is in the folder.
#
#   python -m venv .venv-lmeval && .venv-lmeval/bin/pip install torch==2.13.0 "lm_eval[hf,ruler]==0.4.13"
#   bash scripts/lm_eval_ruler_outputs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/lm_eval_run.sh lm_eval_ruler dtype=float32 --tasks niah_single_1,ruler_vt \
  --metadata '{"max_seq_lengths": [1024, 2048], "tokenizer": "@MODEL@"}' \
  --samples '{"niah_single_1": [0, 1, 2, 500, 501, 502], "ruler_vt": [0, 1, 500, 501]}' --batch_size 4
