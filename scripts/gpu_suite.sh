#!/usr/bin/env bash
# The GPU suite of issue 17 in one call on a GPU machine: `pytest -m gpu`, then
# `benchmarks/coca_bench.py --device cuda`, then `benchmarks/ppl_gpu_bench.py`. Every log, report and
# JSON lands in $OUT (8 files: the device tool returns at most 8), and summary.txt lists each step's exit
# status; a failing step does not stop the next one.
#
# How to run it (the GPU machine has torch, transformers and Triton but no registry access):
#   1. here, on the CPU machine: `bash scripts/gpu_wheels.sh` (the wheels coca_eval needs there, ~3 MiB,
#      into the git-ignored .whl/);
#   2. device tool: command `bash scripts/gpu_suite.sh`, carry [".whl"], timeout_s 600.
# The steps have their own time limits (seconds, env GPU_SUITE_TESTS_S / _COCA_S / _PPL_S) that add up to
# less than the tool's 600 s, so a slow step loses its own tail only (benchmarks print a JSON line per
# measured row before their report, so the log keeps what was measured). To run only some steps:
#   bash scripts/gpu_suite.sh tests coca     # any of: tests coca ppl gen ruler (default: tests coca ppl)
# gen: batched generation against one row and transformers' generate (benchmarks/generation_bench.py;
# sized for one single-row eager decoding step costing 15-30 ms on an H200, launch-bound);
# ruler: RULER end to end at --batch-size 1 and auto (scripts/gpu_ruler_batch.sh), which needs
# .gpu_assets (bash scripts/gpu_assets.sh here, then carry [".whl", ".gpu_assets"]).
# Off the device tool, results go to ./gpu_out unless OUT is set. The project itself is not installed:
# it runs from the checkout (PYTHONPATH), so no build backend is needed there.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
OUT="${OUT:-$PWD/gpu_out}"
mkdir -p "$OUT"
python="${PYTHON:-python3}"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests coca ppl)
summary="$OUT/summary.txt"

if ! "$python" -c "import pydantic, platformdirs" 2>/dev/null && compgen -G ".whl/*.whl" >/dev/null; then
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

{
  echo "gpu_suite $(date -u +%FT%TZ) git $(git rev-parse --short HEAD 2>/dev/null || echo '?') steps: ${steps[*]}"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  "$python" - <<'PY' 2>&1
import importlib
for name in ("torch", "transformers", "triton", "pydantic", "pytest"):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as exc:  # report, do not stop: the steps below say what fails
        print(name, "MISSING:", exc)
import torch
print("cuda", torch.cuda.is_available(), torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY
} >"$summary"
cat "$summary"

step() {  # step NAME SECONDS COMMAND...: run with a time limit, log to $OUT/NAME.log, record the status
  local name="$1" seconds="$2"
  shift 2
  echo "== $name (limit ${seconds}s): $*" | tee -a "$summary"
  local start=$SECONDS
  timeout --signal=INT --kill-after=15 "$seconds" "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "$name: exit $rc after $((SECONDS - start)) s" | tee -a "$summary"
}

for s in "${steps[@]}"; do
  case "$s" in
    tests) step pytest_gpu "${GPU_SUITE_TESTS_S:-220}" "$python" -m pytest -m gpu -v -rA -s -p no:cacheprovider ;;
    coca) step coca_bench "${GPU_SUITE_COCA_S:-210}" "$python" benchmarks/coca_bench.py --device cuda \
      --report "$OUT/coca_bench_cuda.md" ;;
    ppl) step ppl_gpu_bench "${GPU_SUITE_PPL_S:-130}" "$python" benchmarks/ppl_gpu_bench.py \
      --report "$OUT/ppl_gpu_bench.md" ;;
    gen) step generation_bench "${GPU_SUITE_GEN_S:-240}" "$python" benchmarks/generation_bench.py --device cuda \
      --shape smollm2,1b --lengths 1024,4096 --prompts 16 --new-tokens 32 --batches 16,auto \
      --generate-batches 16 --rounds 2 --report "$OUT/generation_bench.md" ;;
    ruler) step ruler_batch "${GPU_SUITE_RULER_S:-160}" bash scripts/gpu_ruler_batch.sh "$OUT" ;;
    *) echo "gpu_suite: unknown step $s (tests, coca, ppl, gen, ruler)" | tee -a "$summary" ;;
  esac
done
echo "== done; files in $OUT:" && ls -la "$OUT"
