"""Every quick generation preset computes what it computed before the generation base moved: the
committed results (made by ``tests/generation/preset_runs.py`` on the code before the move) equal a
fresh run's, key for key, apart from provenance. The digest backend's answers depend on every prompt
token, so a prompt that changed by one token shows as a changed output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.generation.preset_runs import RUNS, computed, run_preset

COMMITTED = Path(__file__).parent / "data" / "preset_runs"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_preset_computes_what_it_did_before_the_move(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_preset(name, tmp_path / "run.json")
    assert result.exit_code == 0, result.output
    expected = json.loads((COMMITTED / f"{name}.json").read_text())
    assert computed(tmp_path / "run.json") == expected
