"""RULER scoring on hand-written outputs: post-processing, partial answers, extra text, case."""

import pytest

from coca_eval.ruler.scoring import postprocess, score_sample, string_match_all, string_match_part
from coca_eval.ruler.tasks import RULER_TASKS


def test_postprocess_strips_and_turns_control_characters_into_newlines():
    assert postprocess("  \t 1234567\x00abc\x1f\n ") == "1234567\nabc"
    assert postprocess("a\tb\rc") == "a\nb\nc"
    assert postprocess("\x7f kept") == "\x7f kept"  # DEL is not in RULER's \x00-\x1f class


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("1234567, 7654321, 1111111 and 2222222.", 1.0),
        ("The numbers are 1234567 and 7654321.", 0.5),
        ("I think it is 12345", 0.0),  # a prefix of a reference is not the reference
        ("", 0.0),
        ("ANSWER: ABC-DEF 1111111 2222222 7654321 1234567 and more text", 1.0),
    ],
)
def test_string_match_all_is_the_fraction_of_references_found(output, expected):
    assert string_match_all(output, ["1234567", "7654321", "1111111", "2222222"]) == expected


def test_string_match_all_is_case_insensitive_and_counts_repeated_references_separately():
    assert string_match_all("the Cheerful-Badger", ["cheerful-badger"]) == 1.0
    assert string_match_all("MOUSE", ["mouse", "Mouse", "house"]) == pytest.approx(2 / 3)


def test_string_match_part_credits_any_reference():
    answers = ["Denver Broncos", "the Denver Broncos", "Broncos"]
    assert string_match_part("the broncos won", answers) == 1.0
    assert string_match_part("Carolina Panthers", answers) == 0.0
    assert string_match_part("", answers) == 0.0


def test_control_characters_inside_an_answer_break_the_match_as_in_ruler():
    assert string_match_all("abc\tdef", ["abc def"]) == 0.0
    assert string_match_all("abc\tdef", ["abc\ndef"]) == 1.0


def test_score_sample_uses_the_task_metric():
    qa, niah = RULER_TASKS.get("qa_1"), RULER_TASKS.get("niah_multivalue")
    assert score_sample(qa, "Paris, I think", ["paris", "London"]) == {"score": 1.0, "found": [True, False]}
    assert score_sample(niah, "Paris, I think", ["paris", "London"]) == {"score": 0.5, "found": [True, False]}


def test_no_reference_is_a_bug_not_a_score():
    with pytest.raises(ValueError):
        string_match_all("x", [])
    with pytest.raises(ValueError):
        string_match_part("x", [])
