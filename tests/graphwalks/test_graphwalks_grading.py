"""GraphWalks' grading on frozen sets of responses: one against precision, recall and F1 worked out by
hand here, one against the dataset card's own grader run outside the project (its values committed
in data/published_values.json); and the stop rule that ends decoding at the answer line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.graphwalks.scoring import answer_line_done, answer_list, score_answer

DATA = Path(__file__).parent / "data"
GOLD = ("aa11", "bb22", "cc33", "dd44")

# response, expected (answered, precision, recall, F1), worked out by hand for the gold set above
FROZEN = [
    ("no answer line at all", (False, 0.0, 0.0, 0.0)),
    ("Final Answer: [aa11, bb22, cc33, dd44]\nthen more text", (False, 0.0, 0.0, 0.0)),  # not the last line
    ("Final Answer: [aa11, bb22, cc33, dd44]", (True, 1.0, 1.0, 1.0)),  # exact
    ("Reasoning.\nFinal Answer: [dd44, aa11, cc33, bb22]", (True, 1.0, 1.0, 1.0)),  # order is free
    ("Final Answer: [aa11, aa11, bb22]", (True, 1.0, 0.5, 2 / 3)),  # duplicates count once: P 2/2, R 2/4
    ("Final Answer: [  aa11 ,bb22  ,   cc33]", (True, 1.0, 0.75, 6 / 7)),  # extra spaces: P 1, R 3/4
    ("Final Answer:[aa11]", (True, 1.0, 0.25, 0.4)),  # no space after the colon: P 1, R 1/4
    ("Final Answer: []", (True, 0.0, 0.0, 0.0)),  # empty list against a non-empty gold set
    ("Final Answer: [aa11, ee55]", (True, 0.5, 0.25, 1 / 3)),  # partial: P 1/2, R 1/4, F1 2PR/(P+R)
    ("Final Answer: [ee55, ff66]", (True, 0.0, 0.0, 0.0)),  # answered, nothing right
    ("Final Answer: aa11, bb22", (False, 0.0, 0.0, 0.0)),  # the mark without a bracketed list
    ("Final Answer: [aa11, bb22, cc33, dd44]\n", (True, 1.0, 1.0, 1.0)),  # a trailing newline
    (
        "Final Answer: the nodes are [aa11, bb22]",
        (True, 1.0, 0.5, 2 / 3),
    ),  # the card's span: any [...] on the line
    ("Final Answer: [[aa11], bb22]", (True, 0.5, 0.25, 1 / 3)),  # the span's outer brackets stripped: "aa11]"
]


@pytest.mark.parametrize(("response", "expected"), FROZEN)
def test_a_frozen_response_scores_as_worked_out_by_hand(response, expected):
    record = score_answer(None, response, GOLD)
    answered, precision, recall, f1 = expected
    assert record["answered"] is answered
    assert record["precision"] == pytest.approx(precision)
    assert record["recall"] == pytest.approx(recall)
    assert record["score"] == pytest.approx(f1)


def test_an_empty_answer_to_an_empty_gold_set_is_right():
    assert score_answer(None, "Final Answer: []", ())["score"] == 1.0
    assert score_answer(None, "Final Answer: [aa11]", ())["score"] == 0.0
    assert score_answer(None, "nothing", ())["score"] == 0.0


def test_the_list_is_the_bracketed_text_split_on_commas():
    assert answer_list("x\nFinal Answer: [a, , b,]") == ["a", "b"]
    assert answer_list("Final Answer: []") == []
    assert answer_list("Final Answer") is None


def test_decoding_stops_once_the_last_line_holds_a_whole_answer():
    assert not answer_line_done("Thinking about it")
    assert not answer_line_done("Final Answer: [aa11, bb")
    assert answer_line_done("Thinking.\nFinal Answer: [aa11, bb22]")
    assert answer_line_done("Final Answer: [aa11]\n")


PUBLISHED_CASES = json.loads((DATA / "responses.json").read_text(encoding="utf-8"))["cases"]
PUBLISHED = json.loads((DATA / "published_values.json").read_text(encoding="utf-8"))["values"]


def test_the_frozen_set_for_the_published_grader_covers_the_hard_cases():
    names = {case["name"] for case in PUBLISHED_CASES}
    wanted = {"answer line missing", "duplicated nodes", "extra spaces", "empty list, non-empty gold"}
    assert wanted <= names and len(PUBLISHED) == len(PUBLISHED_CASES)


@pytest.mark.parametrize(
    ("case", "published"), list(zip(PUBLISHED_CASES, PUBLISHED, strict=True)), ids=lambda v: str(v)[:40]
)
def test_every_response_scores_what_the_cards_grader_gives(case, published):
    """Equal to the card's ``get_list`` and F1 (run outside the project by
    scripts/graphwalks_grader_values.py), sample by sample; the one documented departure, trailing
    whitespace dropped before the last line is read, is checked as such: ours on the response equals
    the card's on the response without it."""
    response = case["response"]
    record = score_answer(None, response, case["answer_nodes"])
    if response != response.rstrip():
        assert record["score"] == pytest.approx(_card_on(response.rstrip()))
        return
    assert record["score"] == pytest.approx(published["f1"], abs=1e-12)
    assert record["answered"] is not published["failed"]
    assert (answer_list(response) or []) == published["list"]


def _card_on(response: str) -> float:
    """The card's F1 for the departure's twin: the same response without its trailing whitespace,
    which the frozen set also holds."""
    (twin,) = [p for c, p in zip(PUBLISHED_CASES, PUBLISHED, strict=True) if c["response"] == response]
    return twin["f1"]
