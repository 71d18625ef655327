"""MRCR's grading on a frozen set of responses equals the published graders (run outside the project
by scripts/mrcr_grader_values.py, their scores committed in data/published_values.json), sample by
sample: OpenAI's card's ``grade`` and DeepMind's MRCR v2 ``mrcr_v2_metric``; the chance floor is the
mean score of the needles' answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.mrcr.deepmind import v2_score
from coca_eval.mrcr.scoring import chance_floor, grade, score_answer

DATA = Path(__file__).parent / "data"
CASES = json.loads((DATA / "responses.json").read_text(encoding="utf-8"))["cases"]
VALUES = json.loads((DATA / "published_values.json").read_text(encoding="utf-8"))
PUBLISHED = VALUES["scores"]
V2_CASES = json.loads((DATA / "responses.json").read_text(encoding="utf-8"))["v2_cases"]


def test_the_frozen_set_covers_what_the_grading_must_get_right():
    names = {c["name"] for c in CASES}
    wanted = {
        "prefix missing",
        "prefix after a leading space",
        "exact copy",
        "partial copy",
        "empty response",
    }
    assert wanted <= names and len(PUBLISHED) == len(CASES)


@pytest.mark.parametrize(
    ("case", "published"), list(zip(CASES, PUBLISHED, strict=True)), ids=lambda v: str(v)
)
def test_every_response_scores_what_the_cards_grader_gives(case, published):
    assert grade(case["response"], case["answer"], case["prefix"]) == published
    record = score_answer(None, case["response"], [case["answer"]], {"prefix": case["prefix"]})
    assert record["score"] == published
    assert record["prefixed"] is case["response"].startswith(case["prefix"])


def test_the_chance_floor_is_the_mean_over_the_needles_answers():
    prefix, right, other = "P", "alpha beta gamma", "zzzz"
    assert chance_floor(prefix + right, prefix, [right, other]) == pytest.approx((1.0 + 0.0) / 2)
    assert chance_floor(prefix + right, prefix, []) == 0.0


@pytest.mark.parametrize(
    ("case", "published"), list(zip(V2_CASES, VALUES["v2_scores"], strict=True)), ids=str
)
def test_every_response_scores_what_deepminds_v2_metric_gives(case, published):
    assert v2_score(case["response"], case["answer"]) == published
    record = score_answer(None, case["response"], [case["answer"]], {"grading": "mrcr_v2", "prefix": "x"})
    assert record["score"] == published
