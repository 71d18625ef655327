"""``helmet --judge``: LongQA and the summaries scored by the judge a run names, through HELMET's own
prompts and verdict parsing. A fake judge server gives scripted verdicts per prompt kind; each judged
sample's score is HELMET's formula of them (NarrativeQA: fluency x correctness / 3; a summary: fluency x
F1 of key-point recall and sentence precision), the metric without a judge is kept beside it, the cell
names the judge, a rerun asks the judge nothing, a verdict that does not read is an error cell naming
the sample, and the gate does not pair runs of different judges."""

from __future__ import annotations

import json
import re

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.helmet.params import make_helmet_params
from coca_eval.methods import make_method
from tests.aa_lcr.aa_lcr_doubles import FakeJudge
from tests.helmet.long_files import write_long_dir

pytestmark = pytest.mark.usefixtures("scripted")
VERDICTS = {  # the first phrase a prompt holds chooses its reply (FakeJudge keeps this order)
    "evaluate the fluency of the provided text": 'Fine.\n```json\n{"fluency": 1}\n```',
    "grading rubric:\nRecall": 'Two points.\n```json\n{"recall": 2}\n```',
    "grading rubric:\nPrecision": 'Some.\n```json\n{"precision": 1, "sentence_count": 4}\n```',
    "Question:": 'Mostly right. {"fluency": 1, "correctness": 2}',
}


@pytest.fixture
def judge():
    server = FakeJudge(dict(VERDICTS))
    yield server
    server.close()


def _run(tmp_path, judge_url: str | None, name: str, tasks=("narrativeqa", "multi_lexsum")):
    data = tmp_path / "data"
    data = str(data if data.exists() else write_long_dir(data, 400))
    values = {"tasks": list(tasks), "lengths": "3000", "samples": 2, "seed": 3, "data": data}
    values |= {"judge": judge_url} if judge_url else {}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("helmet", [method], make_helmet_params(values), tmp_path / name, Runtime())


def test_judged_scores_are_helmets_formula_of_the_verdicts(tmp_path, judge):
    run = _run(tmp_path, judge.url, "judged.json")
    cells = {c.dataset: c for c in run.cells}
    qa, lexsum = cells["narrativeqa"], cells["multi_lexsum"]
    assert qa.status == lexsum.status == "ok"
    assert qa.detail["judge"] == run.config["params"]["judge_id"] == "server:judge-model"
    assert "judged" not in qa.detail and qa.detail["judge_calls"]["asked"] == 2
    for sample in qa.detail["samples"]:
        assert sample["score"] == pytest.approx(2 / 3) and "unjudged_score" in sample
    assert qa.value == pytest.approx(100 * 2 / 3)
    for sample in lexsum.detail["samples"]:
        keypoints = len(sample["judge"]["keypoints"])
        recall, precision = 2 / keypoints, 1 / 4
        assert sample["score"] == pytest.approx(2 * recall * precision / (recall + precision))
        assert len(sample["judge_verdicts"]) == 3
    assert lexsum.detail["judge_calls"]["asked"] == 6  # three prompts per summary


def test_a_rerun_asks_the_judge_nothing(tmp_path, judge):
    first = _run(tmp_path, judge.url, "again.json")
    calls = len(judge.calls)
    second = _run(tmp_path, judge.url, "again.json")
    assert len(judge.calls) == calls and [c.value for c in second.cells] == [c.value for c in first.cells]


def test_a_verdict_that_does_not_read_is_an_error_naming_the_sample(tmp_path, judge):
    judge.verdicts["Question:"] = "I would rather not say."
    (cell,) = _run(tmp_path, judge.url, "unread.json", tasks=("narrativeqa",)).cells
    assert cell.status == "error" and cell.value is None
    assert re.search(r"narrativeqa sample .+: the judge's verdict does not read", cell.detail["error"])


def test_without_a_judge_the_cell_says_its_score_needs_one(tmp_path):
    run = _run(tmp_path, None, "plain.json", tasks=("narrativeqa",))
    (cell,) = run.cells
    assert "--judge" in cell.detail["judged"] and "judge_id" not in run.config["params"]
    assert not any("judge_verdicts" in s for s in cell.detail["samples"])


def test_the_gate_does_not_pair_runs_of_different_judges(tmp_path, judge):
    from coca_eval.gate.protocol import CellPair, IncomparableRuns, check_units

    judged = _run(tmp_path, judge.url, "a.json", tasks=("narrativeqa",)).cells[0]
    plain = _run(tmp_path, None, "b.json", tasks=("narrativeqa",)).cells[0]
    with pytest.raises(IncomparableRuns, match="judge"):
        check_units(CellPair(judged, plain))
    assert json.dumps(judged.detail["judge"])  # recorded as a plain value
