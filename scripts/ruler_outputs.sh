#!/usr/bin/env bash
# Write tests/imported/data/ruler: real RULER prediction folders (its pred/*.jsonl and the summary its
# own scoring wrote) that tests/imported/test_ruler_outputs.py imports. RULER is not on PyPI and its code
# is not part of this project: it runs from a RULER checkout outside it, at the commit named below,
# in a venv of its own (lm-eval's .venv-lmeval has what RULER's scripts import: torch, transformers,
# nltk, wonderwords, pandas). RULER's pipeline as its run.sh calls it, per length: data/prepare.py
# (niah_single_1 and vt, 3 samples, seed 42, the base template, SmolLM2-135M-Instruct's tokenizer),
# pred/call_api.py (server_type hf, greedy: temperature 0, top_k 1) and eval/evaluate.py, whose import
# of NeMo's read_manifest/write_manifest (JSON lines) is met by a stand-in written here.
#
#   git clone https://github.com/NVIDIA/RULER && git -C RULER checkout c3f5e3b
#   .venv-lmeval/bin/pip install tenacity   # RULER's tokenizer.py imports it
#   bash scripts/ruler_outputs.sh RULER .venv-lmeval
set -euo pipefail
ruler=$(cd "$1" && pwd)
venv=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
commit=$(git -C "$ruler" rev-parse HEAD)
model=$(.venv/bin/python -c "from coca_eval.models.presets import resolve_model; print(resolve_model('smollm2-135m')[0])")
work=$(mktemp -d)
cp -r "$ruler/scripts" "$work/scripts"
stub="$work/stub/nemo/collections/asr/parts/utils"
mkdir -p "$stub"
for d in nemo nemo/collections nemo/collections/asr nemo/collections/asr/parts nemo/collections/asr/parts/utils; do
  touch "$work/stub/$d/__init__.py"
done
cat > "$stub/manifest_utils.py" <<'PY'
import json


def read_manifest(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_manifest(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
PY
export PATH="$venv/bin:$PATH" PYTHONPATH="$work/stub" HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
rm -rf tests/imported/data/ruler && mkdir -p tests/imported/data/ruler
for length in 1024 2048; do
  root="$work/run/$length"
  for task in niah_single_1 vt; do
    (cd "$work/scripts" && python data/prepare.py --save_dir "$root/data" --benchmark synthetic --task "$task" \
      --tokenizer_path "$model" --tokenizer_type hf --max_seq_length "$length" --model_template_type base \
      --num_samples 3)
    (cd "$work/scripts/pred" && python call_api.py --data_dir "$root/data" --save_dir "$root/pred" \
      --benchmark synthetic --task "$task" --server_type hf --model_name_or_path "$model" \
      --temperature 0.0 --top_k 1 --top_p 1.0 --batch_size 1)
  done
  (cd "$work/scripts/eval" && python evaluate.py --data_dir "$root/pred" --benchmark synthetic)
  mkdir -p "tests/imported/data/ruler/$length/pred"
  cp "$root"/pred/*.jsonl "$root"/pred/summary*.csv "tests/imported/data/ruler/$length/pred/"
done
echo "RULER $commit, SmolLM2-135M-Instruct ($model), niah_single_1 and vt at 1024 and 2048, 3 samples" \
  > tests/imported/data/ruler/SOURCE
rm -rf "$work"
