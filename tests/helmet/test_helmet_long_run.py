"""A ``helmet`` run of the long-QA and summarisation tasks through the api on the scripted backend: the
cells score the planted answers under both protocols, a judged task's cell says that HELMET's own score
needs ``--judge``, and the category table holds LongQA and Summ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.helmet.judge_prompts import judge_prompts, judge_sample
from coca_eval.helmet.params import make_helmet_params
from coca_eval.helmet.report import summary_table
from coca_eval.helmet.tasks import LONGQA, SUMM
from coca_eval.methods import make_method
from tests.helmet.long_files import write_long_dir
from tests.ruler.scripted_backend import MODE

pytestmark = pytest.mark.usefixtures("scripted")
TASKS = ["narrativeqa", "infbench_qa", "infbench_choice", "infbench_sum", "multi_lexsum"]


def _run(tmp_path, lengths, name, **params):
    values = {"tasks": TASKS, "lengths": lengths, "samples": 2, "seed": 3, **params}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("helmet", [method], make_helmet_params(values), tmp_path / name, Runtime())


@pytest.mark.parametrize(("protocol", "length"), [("exact", "3000"), ("helmet", "8k")])
def test_long_cells_score_the_planted_answers_and_note_the_judge(tmp_path, protocol, length):
    data = str(write_long_dir(tmp_path / "data", 400))
    run = _run(tmp_path, length, f"{protocol}.json", data=data, protocol=protocol)
    cells = {c.dataset: c for c in run.cells}
    assert all(c.status == "ok" and c.n == 2 for c in cells.values())
    # the planted references, joined, fit the long budgets (the 10-token ones cut them)
    assert all(cells[t].value > 50 for t in ("narrativeqa", "infbench_sum", "multi_lexsum"))
    assert {cells[t].detail["category"] for t in TASKS} == {LONGQA, SUMM}
    judged = {t for t, c in cells.items() if "judged" in c.detail}
    assert judged == {"narrativeqa", "infbench_sum", "multi_lexsum"}
    assert "--judge" in cells["narrativeqa"].detail["judged"]
    assert (
        cells["multi_lexsum"].detail["samples"][0]["rougeLsum_f1"]
        == cells["multi_lexsum"].detail["samples"][0]["score"]
    )
    rows = [r.label for r in summary_table(run.cells).rows]
    assert [r.rsplit(": ", 1)[1] for r in rows] == [LONGQA, SUMM]
    _judge_reads_the_records(cells, data)
    MODE["answer"] = "empty"
    empty = _run(tmp_path, length, f"{protocol}-empty.json", data=data, protocol=protocol)
    zero = {c.dataset: c.value for c in empty.cells if c.dataset != "infbench_choice"}
    assert zero == dict.fromkeys(set(TASKS) - {"infbench_choice"}, 0.0)  # (an empty answer is option A:
    # normalised, "A" is an article dropped, as in HELMET: tests/helmet/test_helmet_long_scoring.py)


def _judge_reads_the_records(cells, data: str) -> None:
    """Each judged sample's record holds what HELMET's judge reads: the judge's prompts come from it."""
    lines = Path(data, "multi_lexsum", "multi_lexsum_val.jsonl").read_text(encoding="utf-8").splitlines()
    lexsum = {row["id"]: row for row in map(json.loads, lines)}
    for task in ("narrativeqa", "infbench_sum", "multi_lexsum"):
        for record in cells[task].detail["samples"]:
            sample = judge_sample(task, record, data)
            assert sample.output == record["output"] and len(judge_prompts(task, sample)) in (1, 3)
            if task == "narrativeqa":
                assert sample.question and f"Question: {sample.question}\n" in judge_prompts(task, sample)[0]
            else:
                assert sample.keypoints and sample.expert_summary
            if task == "multi_lexsum":
                row = lexsum[record["judge"]["id"]]
                assert sample.expert_summary == row["summary/long"]
                assert list(sample.keypoints) == row["summary/short_keypoints"]
