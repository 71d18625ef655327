"""Our HELMET scorers against HELMET's own: the per-answer values its functions gave on the frozen
answers of ``data/predictions.json`` (``data/helmet_values.json``, made by
``scripts/helmet_scorer_values.py`` outside this project at the commit it records), held exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.helmet.scoring import icl_metrics, ndcg_at_10, parse_after, parse_ranking, qa_metrics

DATA = Path(__file__).parent / "data"
CASES = json.loads((DATA / "predictions.json").read_text(encoding="utf-8"))
HELMET = json.loads((DATA / "helmet_values.json").read_text(encoding="utf-8"))
METRICS = ("exact_match", "f1", "substring_exact_match")


def _cases(task: str) -> list:
    return list(zip(CASES[task], HELMET[task], strict=True))


def test_the_values_come_from_the_commit_the_docs_name():
    assert HELMET["helmet_commit"] == "4526dfbdc512bd9ff721da336bff4e3e75ecfd27"
    assert all(len(CASES[t]) == len(HELMET[t]) >= 5 for t in ("qa", "json_kv", "icl", "rerank", "ruler"))


@pytest.mark.parametrize(("case", "theirs"), _cases("qa"))
def test_rag_answers_score_as_helmets_default_post_processing(case, theirs):
    ours = qa_metrics(case["output"], case["answers"])
    assert {k: ours[k] for k in METRICS} == {k: theirs[k] for k in METRICS}
    assert parse_after(case["output"]) == theirs["parsed"]


@pytest.mark.parametrize(("case", "theirs"), _cases("json_kv"))
def test_json_kv_answers_score_as_helmets(case, theirs):
    ours = qa_metrics(case["output"], case["answer"], prefix="corresponding value:")
    assert {k: ours[k] for k in METRICS} == {k: theirs[k] for k in METRICS}
    assert parse_after(case["output"], "corresponding value:") == theirs["parsed"]


@pytest.mark.parametrize(("case", "theirs"), _cases("icl"))
def test_icl_labels_score_as_helmets(case, theirs):
    ours = icl_metrics(case["output"], case["answer"])
    assert {k: ours[k] for k in METRICS} == {k: theirs[k] for k in METRICS}
    assert parse_after(case["output"], "label:") == theirs["parsed"]


@pytest.mark.parametrize(("case", "theirs"), _cases("rerank"))
def test_rankings_parse_and_score_ndcg_at_10_as_helmets(case, theirs):
    ranking = parse_ranking(case["output"])
    assert ranking == theirs["ranking"]
    assert ndcg_at_10(ranking, case["qrel"]) == theirs["ndcg_at_10"]


@pytest.mark.parametrize(("case", "theirs"), _cases("ruler"))
def test_ruler_answers_score_as_helmets_ruler_recall(case, theirs):
    from coca_eval.helmet.scoring import score_answer
    from coca_eval.helmet.tasks import HELMET_TASKS

    assert score_answer(HELMET_TASKS.get("ruler_niah_mv"), case["output"], case["answers"])["score"] == theirs
