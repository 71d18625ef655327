"""The suite's own count is honest: CUDA tests run on a CPU say so, data checks are counted apart from
behaviour tests, and the window tests run every case they list.

``.ci/run`` runs the ``gpu`` tests with ``COCA_EVAL_GPU_DEVICE=cpu`` so they cannot rot between GPU
runs; there a "CUDA equals CPU" test compares CPU with CPU, so its id must say ``cpu-dry-run`` and it must
carry the ``cpu_dry_run`` marker the summary counts. The committed-data checks (every committed results
file loads, one case per file, and the zoo's committed reports still show what the docs quote) carry
``committed_data``, which the summary counts and
``docs/development.md`` explains. Each is checked by running pytest itself, as CI does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from fault_cli import ROOT


def run_pytest(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_gpu_tests_run_on_the_cpu_are_named_and_marked_as_cpu_dry_runs():
    dry = run_pytest(
        "--co", "-q", "-m", "cpu_dry_run", "tests/test_api_cuda.py", env={"COCA_EVAL_GPU_DEVICE": "cpu"}
    )
    ids = [line for line in dry.stdout.splitlines() if "::" in line]
    assert dry.returncode == 0 and ids, dry.stdout + dry.stderr
    assert all("cpu-dry-run" in test_id for test_id in ids), ids
    assert "COCA_EVAL_GPU_DEVICE=cpu" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_committed_data_is_counted_apart_and_every_window_case_runs():
    """One pytest run (each costs a start-up): the committed-results checks it passes are counted on
    their own summary line, and ``tests/ppl/test_windows.py`` runs every case it lists, none skipped."""
    import test_results

    marks = [mark.name for mark in test_results.test_committed_results_files_load.pytestmark]
    assert "committed_data" in marks
    baselines = [p for p in test_results.COMMITTED if "baseline" in str(p.relative_to(ROOT)).lower()]
    selected = "test_every_target_scored_exactly_once or (committed and baseline)"
    run = run_pytest("-q", "-rs", "-k", selected, "tests/test_results.py", "tests/ppl/test_windows.py")
    summary = run.stdout.splitlines()[-1]
    assert run.returncode == 0 and "skipped" not in summary, run.stdout[-3000:] + run.stderr[-2000:]
    counted = re.search(r"^(\d+) passed tests only read committed data", run.stdout, re.M)
    assert counted and int(counted.group(1)) == len(baselines) >= 2, run.stdout[-3000:]
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert '-m "not slow and not committed_data"' in development and "`cpu_dry_run`" in development
