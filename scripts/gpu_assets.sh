#!/usr/bin/env bash
# Copy, on this CPU machine, what the GPU suite's `ruler` step reads into ./.gpu_assets (git-ignored by
# .git/info/exclude): SmolLM2-135M's config, tokenizer and chat template (not its weights: the GPU step
# draws random ones), the haystack books and the pinned wonderwords wheel RULER's word lists come from (the GPU
# machine cannot reach PyPI), from coca-eval's cache (the wheel is fetched into it here when absent).
#   bash scripts/gpu_assets.sh        # ~5 MiB; then carry ".gpu_assets" in the device call
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${COCA_EVAL_CACHE:-$HOME/.cache/coca-eval}"
mkdir -p .gpu_assets/cache/books .gpu_assets/smollm2-shape
grep -qx "/.gpu_assets/" .git/info/exclude 2>/dev/null || echo "/.gpu_assets/" >>.git/info/exclude
cp "$cache"/books/* .gpu_assets/cache/books/
"${PYTHON:-.venv/bin/python}" -c "from coca_eval.assets import fetch_pypi_file as f; from coca_eval.ruler.words import \
WONDERWORDS_WHEEL as w; print(f(w))"
mkdir -p .gpu_assets/cache/pypi && cp "$cache"/pypi/wonderwords-*.whl .gpu_assets/cache/pypi/
for f in chat_template.jinja config.json generation_config.json tokenizer.json tokenizer_config.json; do
  cp "$cache/models/smollm2-135m/$f" .gpu_assets/smollm2-shape/
done
du -sh .gpu_assets
