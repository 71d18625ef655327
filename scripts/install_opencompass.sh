#!/usr/bin/env bash
# Create ./.venv-oc: coca-eval (editable, with dev tools) plus the [opencompass] extra.
#
#   bash scripts/install_opencompass.sh
#   .venv-oc/bin/coca-eval opencompass --model DIR --datasets table5 --data-root ~/opencompass-data
#
# OpenCompass 0.5.4 pins numpy<2 and datasets<4, so it gets a venv of its own instead of downgrading
# the main .venv. Torch is installed the same way as there (CPU build on a machine without a GPU).
# Running it again only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv-oc}" bash scripts/install.sh "dev,opencompass"
"${VENV:-.venv-oc}/bin/python" -c "import opencompass, numpy; print('install: opencompass', opencompass.__version__, 'numpy', numpy.__version__)"
