#!/usr/bin/env bash
# Write tests/imported/data/lm_eval_generation: a real lm-evaluation-harness 0.4.13 output folder of a
# generation task outside RULER's port, which tests/imported/test_evaluation_harness_generic.py imports
# under lm-eval's own names. No dataset hub is reachable here, so the task reads twelve local prompts
# written here ("The capital of France is" -> "Paris"). generate_until, greedy, up to 8 new tokens,
# stopping at a newline or a full stop; lm-eval's exact_match (case and punctuation ignored, surrounding
# spaces dropped). SmolLM2-135M-Instruct as the smollm2-135m preset converts it, on CPU, --log_samples.
#
#   bash scripts/lm_eval_generation_outputs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
.venv/bin/python - "$work/capitals.jsonl" <<'PY'
import json, sys
capitals = {
    "France": "Paris", "Italy": "Rome", "Japan": "Tokyo", "Germany": "Berlin", "Spain": "Madrid",
    "England": "London", "Russia": "Moscow", "China": "Beijing", "Egypt": "Cairo", "Canada": "Ottawa",
    "Greece": "Athens", "Portugal": "Lisbon",
}
with open(sys.argv[1], "w") as out:
    for number, (country, city) in enumerate(capitals.items()):
        out.write(json.dumps({"id": number, "context": f"The capital of {country} is", "target": city}) + "\n")
PY
mkdir "$work/tasks"
cat > "$work/tasks/capital_cities.yaml" <<YAML
task: capital_cities
dataset_path: json
dataset_kwargs:
  data_files:
    test: $work/capitals.jsonl
test_split: test
output_type: generate_until
doc_to_text: "{{context}}"
doc_to_target: "{{target}}"
generation_kwargs:
  until: ["\n", "."]
  max_gen_toks: 8
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
    regexes_to_ignore: ["^\\\\s+", "\\\\s+$"]
metadata:
  version: 1.0
YAML
bash scripts/lm_eval_run.sh lm_eval_generation dtype=float32 --tasks capital_cities \
  --include_path "$work/tasks" --batch_size 4
rm -rf "$work"
