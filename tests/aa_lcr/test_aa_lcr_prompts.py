"""AA-LCR's prompts as built here against the published code's (NVIDIA NeMo Gym's port, run outside
this project by ``scripts/aa_lcr_prompt_values.py``, its output committed): the answering prompt and
the 1.0 judge prompt equal them character for character on every smoke question and candidate. Then
the prompts in tokens: under ``published`` the card's text whole, each question at the shortest length
it fits; under ``exact`` exactly N minus the answer budget, the question's own documents whole and
first, the fillers after them; and the judge's replies read as the card asks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.aa_lcr.data import questions
from coca_eval.aa_lcr.prompts import answer_prompt, judge_messages, verdict
from coca_eval.errors import CocaEvalError

PUBLISHED = json.loads((Path(__file__).parent / "data" / "published_prompts.json").read_text())


def test_the_values_come_from_the_published_code():
    assert PUBLISHED["source"].startswith("NVIDIA-NeMo/Gym@07d6b0d07b22fcf530b4c211dae2ee23100428e4")
    assert len(PUBLISHED["cases"]) == len(questions("smoke")) == 6


@pytest.mark.parametrize("case", PUBLISHED["cases"], ids=lambda c: f"question {c['question_id']}")
def test_prompts_equal_the_published_code(case):
    (question,) = [q for q in questions("smoke") if q.question_id == case["question_id"]]
    assert answer_prompt(list(question.documents), question.question) == case["prompt"]
    for judged in case["judged"]:
        (message,) = judge_messages("1.0", question.question, question.answer, judged["candidate"])
        assert message == {"role": "user", "content": judged["judge_prompt"]}


def test_the_1_1_judge_sends_its_notes_as_a_system_message():
    system, user = judge_messages("1.1", "Q?", "A", "B")
    assert system["role"] == "system" and system["content"].startswith("Decide whether the CANDIDATE")
    assert "START QUESTION Q?\n\nEND QUESTION" in user["content"]
    assert "BEGIN CANDIDATE ANSWER TO ASSESS\n\nB\n\nEND CANDIDATE ANSWER TO ASSESS" in user["content"]
    assert user["content"].endswith("Reply as JSON, with a verdict of CORRECT or INCORRECT.")


@pytest.mark.parametrize(
    ("protocol", "reply", "expected"),
    [
        ("1.0", "CORRECT", "CORRECT"),
        ("1.0", " incorrect.\n", "INCORRECT"),
        ("1.0", "**Correct**", "CORRECT"),
        ("1.0", "The numbers match.\nINCORRECT.", "INCORRECT"),
        ("1.1", '{"verdict": "CORRECT"}', "CORRECT"),
        ("1.1", 'Here: {"verdict": "incorrect"}', "INCORRECT"),
    ],
)
def test_verdicts_are_read_as_the_card_asks(protocol, reply, expected):
    assert verdict(protocol, reply) == expected


@pytest.mark.parametrize(
    ("protocol", "reply"),
    [
        ("1.0", "maybe"),
        ("1.0", "CORRECTNESS"),
        ("1.0", "The answer is not CORRECT."),
        ("1.0", "INCORRECT, not CORRECT"),
        ("1.1", "CORRECT"),
    ],
)
def test_a_reply_naming_no_verdict_is_refused(protocol, reply):
    with pytest.raises(CocaEvalError):
        verdict(protocol, reply)
