# Sourced by the recipe-v5 device scripts, from the repository root: the environment every one of them
# runs in on the GPU machine (no registry there: coca_eval's missing wheels come from the carried .whl/,
# the pinned book texts from the carried .gpucache/), and the CUDA MPS daemon, so that many small jobs
# share the GPU.
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1
export COCA_EVAL_CACHE=$PWD/.gpucache
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site
nvidia-cuda-mps-control -d 2>/dev/null || true
