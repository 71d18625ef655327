"""The result contract: coca-eval/2 is written, every committed coca-eval/1 file still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.results import SCHEMA, Cell, Run, load_run, save_run

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted(
    p
    for p in [*ROOT.glob("reports/**/*.json"), *ROOT.glob("tests/**/*.json")]
    if json.loads(p.read_text(encoding="utf-8")).get("schema", "").startswith("coca-eval/")
)


def test_new_runs_are_schema_2_with_device_dtype_and_dirty_flag(tmp_path):
    cell = Cell(task="ppl", method="m", metric="ppl", length=8, value=2.0, device="cpu", dtype="float32")
    save_run(
        Run(git_dirty=True, config={"task": "ppl", "task_version": 1}, cells=[cell]), tmp_path / "r.json"
    )
    raw = json.loads((tmp_path / "r.json").read_text())
    assert SCHEMA == raw["schema"] == "coca-eval/2" and raw["git_dirty"] is True
    assert (raw["cells"][0]["device"], raw["cells"][0]["dtype"]) == ("cpu", "float32")
    assert load_run(tmp_path / "r.json").settings.task_version == 1


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_results_files_load(path):
    run = load_run(path)
    assert run.cells and run.settings.task is not None
