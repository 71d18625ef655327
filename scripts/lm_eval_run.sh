#!/usr/bin/env bash
# Run lm-evaluation-harness 0.4.13 (its own venv, .venv-lmeval) offline on the CPU with --log_samples, on
# SmolLM2-135M-Instruct as the smollm2-135m preset converts it, and put the results and samples files it
# writes into tests/imported/data/NAME (replacing what was there). The scripts that write lm-eval test
# data (scripts/lm_eval_*_outputs.sh) call it; @MODEL@ in an argument stands for the model's directory.
#
#   bash scripts/lm_eval_run.sh NAME MODEL_ARGS LM_EVAL_RUN_ARGS...
#   bash scripts/lm_eval_run.sh lm_eval_ppl dtype=float32,max_length=512 --tasks books_ppl --batch_size 1
set -euo pipefail
cd "$(dirname "$0")/.."
name="$1" model_args="$2"
shift 2
model=$(.venv/bin/python -c "from coca_eval.models.presets import resolve_model; print(resolve_model('smollm2-135m')[0])")
out=$(mktemp -d)
HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false .venv-lmeval/bin/python -m lm_eval run \
  --model hf --model_args "pretrained=$model,$model_args" --device cpu --output_path "$out" --log_samples \
  "${@//@MODEL@/$model}"
rm -rf "tests/imported/data/$name" && mkdir -p "tests/imported/data/$name"
cp "$out"/*/results_*.json "$out"/*/samples_*.jsonl "tests/imported/data/$name/"
rm -rf "$out"
