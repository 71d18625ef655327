"""HELMET's long-QA and summarisation metrics: on the frozen answers of ``data/long_cases.json`` every
metric equals what HELMET's own post-processing gave (``data/helmet_long_values.json``, made outside the
project by ``scripts/helmet_long_values.py``): ROUGE-L and ROUGE-Lsum, exact match, F1, substring exact
match, raw and parsed, the multiple-choice rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.helmet.scoring import score_answer
from coca_eval.helmet.tasks import HELMET_TASKS

DATA = Path(__file__).parent / "data"
CASES = json.loads((DATA / "long_cases.json").read_text(encoding="utf-8"))["metrics"]
HELMET = json.loads((DATA / "helmet_long_values.json").read_text(encoding="utf-8"))["metrics"]
PAIRS = [pytest.param(task, i, id=f"{task}-{i}") for task, cases in CASES.items() for i in range(len(cases))]


@pytest.mark.parametrize(("task", "index"), PAIRS)
def test_metrics_equal_helmets(task, index):
    case, theirs = CASES[task][index], HELMET[task][index]
    answers = [case["answers"]] if isinstance(case["answers"], str) else case["answers"]
    ours = score_answer(HELMET_TASKS.get(task), case["output"], answers)
    expected = {k: v for k, v in theirs.items() if k != "parsed"}
    assert {k: ours[k] for k in expected} == pytest.approx(expected, abs=1e-12)
    assert ours["score"] == ours[HELMET_TASKS.get(task).metric]


def test_the_cases_tell_the_rules_apart():
    """Cases where parsing, stemming and the choice rule decide: a scorer without them would fail."""
    choice = HELMET["infbench_choice"]
    assert choice[2]["exact_match"] == 1.0 and choice[3]["exact_match"] == 0.0  # 'letter. option' only
    assert choice[5]["exact_match"] == 1.0  # an empty answer matches option A: "a" normalises away
    assert HELMET["narrativeqa"][1]["rougeL_f1"] == 1.0  # parsed after Answer:, 'poles' stemmed
    assert 0 < HELMET["infbench_sum"][0]["rougeLsum_f1"] < 1
    assert HELMET["multi_lexsum"][2]["rougeL_recall"] > 0  # parsed after 'summary:', case ignored
