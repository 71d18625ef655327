#!/usr/bin/env bash
# Write tests/imported/data/lm_eval_ppl: a real lm-evaluation-harness 0.4.13 output folder of a
# perplexity task, which tests/imported/test_evaluation_harness_ppl.py imports. The task is lm-eval's
# wikitext task as written (loglikelihood_rolling; word_perplexity, byte_perplexity, bits_per_byte with
# lm-eval's default per-document counts) on local documents, since no dataset hub is reachable: the
# opening 4,000 characters of each of this project's four embedded public-domain books. lm-eval runs in
# its own venv on SmolLM2-135M-Instruct as the smollm2-135m preset converts it, on CPU, offline, with a
# 512-token window (its rolling windows then cover every document in two or three calls), --log_samples.
#
#   python -m venv .venv-lmeval && .venv-lmeval/bin/pip install torch==2.13.0 "lm_eval[hf]==0.4.13"
#   bash scripts/lm_eval_ppl_outputs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
.venv/bin/python - "$work/books.jsonl" <<'PY'
import json, sys
from coca_eval.data.books import load_embedded_books
with open(sys.argv[1], "w") as out:
    for book in load_embedded_books():
        out.write(json.dumps({"doc_id": book.doc_id, "text": book.text[:4000]}) + "\n")
PY
mkdir "$work/tasks"
cat > "$work/tasks/books_ppl.yaml" <<YAML
task: books_ppl
dataset_path: json
dataset_kwargs:
  data_files:
    test: $work/books.jsonl
output_type: loglikelihood_rolling
test_split: test
doc_to_text: ""
doc_to_target: "{{text}}"
should_decontaminate: true
doc_to_decontamination_query: "{{text}}"
metric_list:
  - metric: word_perplexity
  - metric: byte_perplexity
  - metric: bits_per_byte
metadata:
  version: 1.0
YAML
bash scripts/lm_eval_run.sh lm_eval_ppl dtype=float32,max_length=512 --tasks books_ppl \
  --include_path "$work/tasks" --batch_size 1
rm -rf "$work"
