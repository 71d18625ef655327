"""BABILong's prompts and answer check against BABILong's own code: the prompt texts for every task and
every combination of prompt parts, and the verdicts on frozen outputs covering every task's labels,
that ``scripts/babilong_reference_values.py`` got from BABILong's ``prompts.py`` and ``metrics.py``
(outside the project, at the commit it records) are ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.babilong.prompts import PARTS, formatted_input, source_commit, task_labels, tasks
from coca_eval.babilong.scoring import is_correct

DATA = Path(__file__).parent / "data"
BABILONG = json.loads((DATA / "babilong_values.json").read_text(encoding="utf-8"))
CASES = {c["name"]: c for c in json.loads((DATA / "cases.json").read_text(encoding="utf-8"))["contexts"]}


def test_the_reference_and_the_prompts_come_from_one_commit():
    assert BABILONG["babilong_commit"] == source_commit() == "7a6efee29f5cac03c3c410e6799c80fd2ffe3610"
    assert tasks() == [f"qa{i}" for i in range(1, 21)]
    assert {c["task"] for c in BABILONG["scored"]} == set(tasks())  # every label set is exercised
    assert {c["correct"] for c in BABILONG["scored"]} == {True, False}


@pytest.mark.parametrize("task", [f"qa{i}" for i in range(1, 21)])
def test_formatted_prompts_equal_babilongs(task):
    mine = [c for c in BABILONG["formatted"] if c["task"] == task]
    assert len(mine) == 8 * len(CASES)
    for case in mine:
        keep = tuple(part for part, kept in zip(PARTS, case["kept"], strict=True) if kept)
        context = CASES[case["case"]]
        assert formatted_input(task, context["context"], context["question"], keep) == case["text"]


@pytest.mark.parametrize("case", BABILONG["scored"], ids=lambda c: f"{c['task']}:{c['output'][:20]}")
def test_answer_checks_equal_babilongs(case):
    assert (
        is_correct(case["target"], case["output"], case["question"], task_labels(case["task"]))
        is case["correct"]
    )
