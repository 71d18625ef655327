"""The gate on two RULER runs gates on the effective length as well as on the cells: a candidate whose
effective length (the 95 % bound) is shorter than the baseline's fails, even where every cell's drop is
within tolerance; an equal one passes; the check shows in the table and the JSON."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.gate import markdown_summary, run_gate, verdict_json
from coca_eval.gate.options import make_options
from coca_eval.lengths import format_length
from coca_eval.methods import make_method
from coca_eval.results import load_run
from coca_eval.ruler.params import make_ruler_params

pytestmark = pytest.mark.usefixtures("scripted")

LOOSE = make_options("2%", "99", 0.05, 0, 1000)  # no cell's drop is beyond this tolerance


def _run(path):
    params = make_ruler_params({"tasks": "niah_single_1,niah_multikey_2", "lengths": "512,1k",
                                "samples": 20, "chat_template": "none", "threshold": 80})  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    evaluate("ruler", [method], params, path, Runtime())
    return load_run(path)


def _failing_at(run, length: int, wrong: int):
    """``run`` with the first ``wrong`` samples of every cell at ``length`` answered with nothing."""
    cells = []
    for cell in run.cells:
        if cell.length == length:
            samples = [
                {**s, "score": 0.0, "found": [False] * len(s["answers"]), "output": ""} if i < wrong else s
                for i, s in enumerate(cell.detail["samples"])
            ]
            value = 100 * sum(s["score"] for s in samples) / len(samples)
            cell = cell.model_copy(update={"value": value, "detail": {**cell.detail, "samples": samples}})
        cells.append(cell)
    return run.model_copy(update={"cells": cells})


def test_an_equal_effective_length_passes(tmp_path):
    base, cand = _run(tmp_path / "base.json"), _run(tmp_path / "cand.json")
    result = run_gate([(base, cand)], LOOSE)
    (check,) = result.runs
    assert (check.baseline, check.candidate, check.failed) == ("1k", "1k", False)
    assert result.exit_code == 0


def test_a_shorter_effective_length_fails_the_gate_whatever_the_cells_say(tmp_path):
    base = _run(tmp_path / "base.json")
    cand = _failing_at(base, 1024, 6)  # 70 at 1k: below the threshold of 80
    result = run_gate([(base, cand)], LOOSE)
    assert all(v.verdict == "pass" for v in result.cells)  # a drop of 30 points is within 0.99
    (check,) = result.runs
    assert (check.baseline, check.candidate) == ("1k", "512") and check.failed
    assert check.reason == "fell from 1k to 512" and "threshold 80" in check.name
    assert result.exit_code == 1
    assert verdict_json(result)["runs"][0]["verdict"] == "regression"
    assert "fell from 1k to 512" in markdown_summary(result)
    assert "1 regressed" in markdown_summary(result)


def test_a_longer_effective_length_passes(tmp_path):
    base = _run(tmp_path / "base.json")
    result = run_gate([(_failing_at(base, 1024, 6), base)], LOOSE)
    (check,) = result.runs
    assert (check.baseline, check.candidate, check.failed) == ("512", "1k", False)


def test_the_gate_table_names_each_ruler_task(tmp_path):
    """One row per task and length, each naming its task: two rows of one length are told apart."""
    from coca_eval.gate.summary import summary_rows

    base, cand = _run(tmp_path / "base.json"), _run(tmp_path / "cand.json")
    result = run_gate([(base, cand)], LOOSE)
    where = [row[0] for row in summary_rows(result)][: len(result.cells)]  # the run checks follow
    cells = [f"ruler {c.dataset} {format_length(c.length)}" for c in base.cells]
    assert sorted(where) == sorted(cells)
    assert len(set(cells)) == len(cells) > 1


def test_a_candidate_without_one_tasks_cells_is_refused(tmp_path):
    """A candidate file lacking a task's cells is refused before any effective length is read (so the
    baseline's task list and the cells' own give the same lengths: see ``ruler/gate.py``)."""
    from coca_eval.gate.protocol import IncomparableRuns

    base = _run(tmp_path / "base.json")
    cand = base.model_copy(update={"cells": [c for c in base.cells if c.dataset != "niah_multikey_2"]})
    with pytest.raises(IncomparableRuns, match="cells differ for 'zoo'.*niah_multikey_2"):
        run_gate([(base, cand)], LOOSE)
