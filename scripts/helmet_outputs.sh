#!/usr/bin/env bash
# Write tests/imported/data/helmet: real HELMET outputs (its eval.py at one commit, run outside this
# project) that tests/imported/test_helmet_outputs.py imports. HELMET_DIR holds HELMET's eval.py,
# arguments.py, data.py, model_utils.py and utils.py (`git show COMMIT:<file>` from a clone) and a COMMIT
# file; VENV has what they import (see scripts/helmet_prompt_ids.py, plus accelerate and
# setuptools<81 for HELMET's pkg_resources import).
#
#   bash scripts/helmet_outputs.sh HELMET_DIR VENV
#
# The data are tests/helmet/helmet_files.py's files in HELMET's layout; the model SmolLM2-135M-Instruct
# as the smollm2-135m preset converts it, float32 on CPU. HELMET's HF loader asks for FlashAttention 2
# unless the model's name contains one of the names it exempts ("yarn"); a CPU has no FlashAttention,
# so the model is linked under such a name. Its two settings are HELMET's configs': json_kv as
# recall_short.yaml runs it (100 new tokens, no stop at a newline), kilt_nq as rag_short.yaml does
# (20 tokens, stop at a newline); 3 samples each at 8k, seed 42.
set -euo pipefail
helmet=$(cd "$1" && pwd) venv=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
model=$(.venv/bin/python -c "from coca_eval.models.presets import resolve_model; print(resolve_model('smollm2-135m')[0])")
work=$(mktemp -d)
ln -s "$model" "$work/smollm2-135m-yarn"
.venv/bin/python -c "import sys; from pathlib import Path; sys.path.insert(0, 'tests/helmet'); \
from helmet_files import write_data_dir, write_recall_dir; \
write_data_dir(Path('$work/data'), 3); write_recall_dir(Path('$work/data'))"
common=(--model_name_or_path "$work/smollm2-135m-yarn" --input_max_length 8192 --max_test_samples 3
        --shots 2 --seed 42 --output_dir "$work/out" --no_cuda --no_bf16 --no_torch_compile --num_workers 0)
(cd "$helmet" && HF_HUB_OFFLINE=1 "$venv/bin/python" eval.py "${common[@]}" --datasets json_kv \
  --test_files "$work/data/json_kv/test_k105_dep6.jsonl" --demo_files "" --generation_max_length 100 \
  --stop_newline False)
(cd "$helmet" && HF_HUB_OFFLINE=1 "$venv/bin/python" eval.py "${common[@]}" --datasets kilt_nq \
  --test_files "$work/data/kilt/nq-dev-multikilt_1000_k50_dep6.jsonl" \
  --demo_files "$work/data/kilt/nq-train-multikilt_1000_k3_dep6.jsonl" --generation_max_length 20 \
  --stop_newline True)
rm -rf tests/imported/data/helmet && mkdir -p tests/imported/data/helmet
cp "$work"/out/*.json tests/imported/data/helmet/
cp "$helmet/COMMIT" tests/imported/data/helmet/COMMIT
rm -rf "$work"
