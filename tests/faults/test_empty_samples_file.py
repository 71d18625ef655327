"""An lm-eval folder where one task's samples file is empty: the import used to keep the other tasks
and drop this one without a word, though its aggregates stand in the results file. It is refused in one
line naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from tests.imported.lm_eval_folders import copy_lm_eval_ruler

IMPORTED = Path(__file__).resolve().parent.parent / "imported" / "data"


def _samples_path(folder: Path, task: str) -> Path:
    return next(folder.glob(f"samples_{task}_*.jsonl"))


@pytest.mark.parametrize("task", ["ruler_vt", "niah_single_1"])
def test_import_lm_eval_refuses_an_empty_samples_file(tmp_path, capsys, task):
    """lm-eval's RULER port, two tasks: one task's samples file emptied (the import printed the other)."""
    folder = copy_lm_eval_ruler(tmp_path)
    path = _samples_path(folder, task)
    path.write_text("")
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(path), "holds no samples")
    assert not (tmp_path / "out.json").exists()


def test_import_lm_eval_refuses_an_empty_samples_file_of_a_generation_task(tmp_path, capsys):
    """A generation task's file of one blank line: refused before, but without naming the file."""
    shutil.copytree(IMPORTED / "lm_eval_generation", tmp_path / "gen")
    path = _samples_path(tmp_path / "gen", "capital_cities")
    path.write_text("\n")
    result = invoke(capsys, "import", "lm-eval", tmp_path / "gen", "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(path), "holds no samples")
