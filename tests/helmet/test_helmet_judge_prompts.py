"""HELMET's judge prompts and verdict reading: the prompts ``judge_prompts`` builds equal those HELMET's
``check_metrics`` (``scripts/eval_gpt4_longqa.py``, ``scripts/eval_gpt4_summ.py``) sent for the frozen
samples of ``data/long_cases.json``, and ``judge_score`` reads the frozen verdicts as it scored them
(``data/helmet_long_values.json``, made outside the project by ``scripts/helmet_long_values.py``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from coca_eval.helmet.judge_prompts import JudgeSample, judge_prompt, judge_prompts, judge_score
from tests.helmet.long_files import write_long_dir

DATA = Path(__file__).parent / "data"
CASES = json.loads((DATA / "long_cases.json").read_text(encoding="utf-8"))["judge"]
HELMET = json.loads((DATA / "helmet_long_values.json").read_text(encoding="utf-8"))["judge"]


def _rows(root: Path, relative: str) -> list[dict]:
    return [json.loads(line) for line in (root / relative).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, list[JudgeSample]]:
    """Each case as the judge runner will hand it: the output with its row's references and key points."""
    root = write_long_dir(tmp_path_factory.mktemp("helmet-judge"))
    books = _rows(root, "infbench/longbook_sum_eng.jsonl")
    points = {r["id"]: r["keypoints"] for r in _rows(root, "infbench/longbook_sum_eng_keypoints.jsonl")}
    cases = _rows(root, "multi_lexsum/multi_lexsum_val.jsonl")
    out = {
        "narrativeqa": [JudgeSample(c["output"], c["question"], c["answers"]) for c in CASES["narrativeqa"]]
    }
    out["infbench_sum"] = [
        JudgeSample(
            c["output"],
            keypoints=points[books[c["index"]]["id"]],
            expert_summary=books[c["index"]]["answer"][0],
        )
        for c in CASES["infbench_sum"]
    ]
    out["multi_lexsum"] = [
        JudgeSample(
            c["output"],
            keypoints=cases[c["index"]]["summary/short_keypoints"],
            expert_summary=cases[c["index"]]["summary/long"],
        )
        for c in CASES["multi_lexsum"]
    ]
    return out


def _digest(text: str) -> dict:
    return {"chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest(), "tail": text[-300:]}


@pytest.mark.parametrize("task", ["narrativeqa", "infbench_sum", "multi_lexsum"])
def test_judge_prompts_equal_helmets(task, samples):
    ours = [_digest(p) for sample in samples[task] for p in judge_prompts(task, sample)]
    assert ours == HELMET[task]["prompts"]


def test_narrativeqa_scores_equal_helmets(samples):
    for case, theirs in zip(CASES["narrativeqa"], HELMET["narrativeqa"]["scores"], strict=True):
        score = judge_score("narrativeqa", case["verdict"])
        assert score == (None if theirs is None else theirs["fluency"] * theirs["correctness"] / 3)
    assert None in HELMET["narrativeqa"]["scores"]  # the cases hold verdicts HELMET cannot read


@pytest.mark.parametrize("task", ["infbench_sum", "multi_lexsum"])
def test_summary_scores_equal_helmets(task, samples):
    theirs = HELMET[task]["scores"]
    ours = [judge_score(task, c["verdicts"], s) for c, s in zip(CASES[task], samples[task], strict=True)]
    assert ours == [None if t is None else pytest.approx(t["f1"], abs=1e-12) for t in theirs]
    scored = [s for s in ours if s is not None]
    assert sum(scored) / len(scored) == pytest.approx(HELMET[task]["averaged"]["gpt-4-f1"], abs=1e-12)


def test_one_prompt_per_narrativeqa_sample_three_per_summary(samples):
    assert judge_prompt("narrativeqa", samples["narrativeqa"][0]).endswith(
        "Answer: They are headed for the North Pole.\n"
    )
    with pytest.raises(ValueError, match="three|judge_prompts"):
        judge_prompt("multi_lexsum", samples["multi_lexsum"][0])
    with pytest.raises(ValueError, match="three verdicts"):
        judge_score("infbench_sum", "{}")


def test_a_book_without_key_points_is_one_line(tmp_path):
    from coca_eval.errors import CocaEvalError
    from coca_eval.helmet.judge_prompts import judge_sample

    root = write_long_dir(tmp_path)
    record = {"output": "A summary.", "answers": ["The book."], "judge": {"id": 999, "expert_summary": "x"}}
    with pytest.raises(CocaEvalError, match="no key points of row 999"):
        judge_sample("infbench_sum", record, str(root))
    record["judge"]["id"] = 10
    assert len(judge_sample("infbench_sum", record, str(root)).keypoints) == 3
