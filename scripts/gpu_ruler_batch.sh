#!/usr/bin/env bash
# RULER end to end on the GPU at --batch-size 1 and auto (by default four NIAH tasks at 1k, 4 samples),
# on a model of SmolLM2-135M's shape and tokenizer with random weights (the real weights are too large to
# travel to the GPU machine; its answers are noise, so every answer runs to its budget: the most work).
# Prints each run's wall time and whether the two runs' answers agree (the auto run's results land in
# OUT_DIR). Run by scripts/gpu_suite.sh (step ruler), which carries .gpu_assets (the tokenizer and the
# haystack books, made by scripts/gpu_assets.sh) and sets PYTHONPATH.
#   bash scripts/gpu_ruler_batch.sh OUT_DIR
set -uo pipefail
out="$1"
python="${PYTHON:-python3}"
export COCA_EVAL_CACHE="$PWD/.gpu_assets/cache"
model=/tmp/smollm2-shape-random
"$python" - "$model" <<'PY'
import shutil, sys, torch
from transformers import AutoConfig, AutoModelForCausalLM
source, target = ".gpu_assets/smollm2-shape", sys.argv[1]
shutil.copytree(source, target, dirs_exist_ok=True)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source))
model.save_pretrained(target)
print("random-weight model in", target)
PY
# four NIAH tasks at 1k, 4 samples: the batch-1 run decodes 16 rows one at a time (about a minute on
# an H200, whose single-row eager step is launch-bound), the auto run together
tasks=${RULER_TASKS:-niah_single_1,niah_single_2,niah_multikey_1,niah_multivalue}
lengths=${RULER_LENGTHS:-1k}
device=${RULER_DEVICE:-cuda}  # RULER_DEVICE=cpu RULER_LENGTHS=1k RULER_TASKS=vt: a dry run of this script
dtype=$([ "$device" = cpu ] && echo float32 || echo bfloat16)
runs=$(mktemp -d /tmp/ruler-batch-runs.XXXX)  # fresh each call: a warm machine keeps /tmp
mkdir -p "$runs"
for batch in 1 auto; do
  start=$(date +%s%N)
  "$python" -m coca_eval ruler --model "$model" --tasks "$tasks" --lengths "$lengths" --samples 4 --device "$device" \
    --dtype "$dtype" --batch-size "$batch" --output "$runs/ruler_b$batch.json" >"$runs/ruler_b$batch.log" 2>&1
  rc=$?
  echo "ruler --batch-size $batch: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms (whole process)"
  tail -5 "$runs/ruler_b$batch.log"
done
cp "$runs/ruler_bauto.json" "$out/ruler_bauto.json" 2>/dev/null
"$python" - "$runs" <<'PY'
import json, sys
out = sys.argv[1]
runs = [json.load(open(f"{out}/ruler_b{b}.json")) for b in ("1", "auto")]
answers = [[s["output"] for c in r["cells"] for s in c.get("detail", {}).get("samples", [])] for r in runs]
print("cells:", [[c["status"] for c in r["cells"]] for r in runs])
same = sum(a == b for a, b in zip(*answers))
print(f"answers equal at batch 1 and auto: {same} of {len(answers[0])}")
PY
