"""The gate on two HELMET runs: per category, the candidate's effective length read at the baseline's
bar must not fall; a candidate worse at every length falls even though its own bar would be lower."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.gate import run_gate
from coca_eval.gate.options import make_options
from coca_eval.helmet.params import make_helmet_params
from coca_eval.methods import make_method
from coca_eval.results import load_run

pytestmark = pytest.mark.usefixtures("scripted")

LOOSE = make_options("2%", "99", 0.05, 0, 1000)  # no cell's drop is beyond this tolerance


def _run(path):
    params = make_helmet_params({"tasks": "json_kv,ruler_niah_mk_2", "lengths": "1k,1500", "samples": 20})
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    evaluate("helmet", [method], params, path, Runtime())
    return load_run(path)


def _failing(run, lengths: set[int], wrong: int):
    """``run`` with the first ``wrong`` samples of every cell at ``lengths`` answered with nothing."""
    cells = []
    for cell in run.cells:
        if cell.length in lengths:
            samples = [
                {**s, "score": 0.0, "output": ""} if i < wrong else s
                for i, s in enumerate(cell.detail["samples"])
            ]
            value = 100 * sum(s["score"] for s in samples) / len(samples)
            cell = cell.model_copy(update={"value": value, "detail": {**cell.detail, "samples": samples}})
        cells.append(cell)
    return run.model_copy(update={"cells": cells})


def test_an_equal_category_passes(tmp_path):
    base, cand = _run(tmp_path / "base.json"), _run(tmp_path / "cand.json")
    result = run_gate([(base, cand)], LOOSE)
    (check,) = result.runs
    assert (check.baseline, check.candidate, check.failed) == ("1500", "1500", False)
    assert "Recall effective length" in check.name and "bar 85.0" in check.name
    assert result.exit_code == 0


def test_a_candidate_worse_everywhere_falls_at_the_baselines_bar(tmp_path):
    base = _run(tmp_path / "base.json")
    cand = _failing(base, {1024, 1500}, 8)  # 60 everywhere: its own bar (51) would keep 1.5k
    result = run_gate([(base, cand)], LOOSE)
    assert all(v.verdict == "pass" for v in result.cells)
    (check,) = result.runs
    assert check.failed and (check.baseline, check.candidate) == ("1500", "<1k")
    assert result.exit_code == 1


def test_a_baseline_answering_nothing_has_no_bar_to_fall_from(tmp_path, monkeypatch):
    """Recall at 0 at the shortest length: 85 % of 0 would make every length effective, so the
    category's effective length is undefined (table and check), and no candidate regresses from it."""
    from coca_eval.helmet.report import summary_table
    from tests.ruler.scripted_backend import MODE

    monkeypatch.setitem(MODE, "answer", "empty")
    base = _run(tmp_path / "base.json")
    assert summary_table(base.cells).rows[0].entries[-1].text == "undefined (no bar: 0 at 1k)"
    assert base.config["effective_length"]["methods"][base.cells[0].method]["Recall"]["effective"] is None
    monkeypatch.setitem(MODE, "answer", "planted")
    result = run_gate([(base, _run(tmp_path / "cand.json"))], LOOSE)
    (check,) = result.runs
    assert not check.failed and check.baseline == "undefined (no bar: 0 at 1k)"
    assert "the baseline's effective length is undefined (no bar: 0 at 1k)" in check.reason
