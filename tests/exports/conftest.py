"""Runs to export: a real lm-eval 0.4.13 RULER run imported (tests/imported/data) and a committed
passkey run of this project (two methods, three lengths, Wilson intervals, plots)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``coca-eval ARGS`` in a fresh process (trackers keep process-wide state)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "coca_eval", *args],
        cwd=cwd, env={**os.environ, "PYTHONPATH": path, **(env or {})}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def ruler_run(tmp_path_factory) -> Path:
    """lm-eval's own RULER outputs (niah_single_1 and vt at 1k and 2k) as a results file."""
    from coca_eval.imported.evaluation_harness import import_harness_dir
    from coca_eval.results import save_run

    path = tmp_path_factory.mktemp("ruler") / "lm-eval-ruler.json"
    save_run(import_harness_dir(ROOT / "tests" / "imported" / "data" / "lm_eval_ruler", None), path)
    return path


@pytest.fixture
def passkey_run(tmp_path) -> Path:
    """reports/embedded/passkey.json, copied where a test may change it."""
    path = tmp_path / "passkey.json"
    path.write_text((ROOT / "reports" / "embedded" / "passkey.json").read_text())
    return path


def cells_of(path: Path) -> list[dict]:
    """The run's cells as every command reads them: accuracy-like values in points, whatever unit the
    file holds (reports/embedded/passkey.json is a coca-eval/1 file of 0-1 passkey accuracies)."""
    from coca_eval.taskspec import load_checked_run

    return [cell.model_dump(mode="json") for cell in load_checked_run(path).cells]


def file_cells_in_points(path: Path) -> list[dict]:
    """The results file's own cells (not any reader's), their 0-1 passkey accuracies times 100: what an
    export of the old file must hold, in points."""
    raw = json.loads(path.read_text())
    assert raw["schema"] in ("coca-eval/1", "coca-eval/2")  # written before cells stated a unit
    return [{**c, "value": 100 * c["value"]} if c["task"] == "passkey" else c for c in raw["cells"]]
