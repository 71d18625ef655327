#!/usr/bin/env bash
# Install (or update) ./.venv-oc and run the OpenCompass tests: the real OpenCompass 0.5.4 on tiny
# random models and a tiny data root built by the tests (no downloads). Extra arguments go to pytest.
#
#   bash scripts/test_opencompass.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_opencompass.sh
"${VENV:-.venv-oc}/bin/python" -m pytest -m opencompass -q "$@"
