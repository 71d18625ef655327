"""bAbI files: the format read into single-question samples as BABILong reads it, and our qa1-qa3
generator's answers checked by replaying every story independently (a world rebuilt from the sentences
alone), for many stories."""

from __future__ import annotations

import re

import pytest

from coca_eval.babilong.babi import generate_babi, parse_babi
from coca_eval.errors import CocaEvalError

MOVE = re.compile(r"^(\w+) (?:moved|went|journeyed|travelled|went back) to the (\w+)\.$")
TAKE = re.compile(r"^(\w+) (?:got|picked up|grabbed|took) the (\w+) there\.$")
DROP = re.compile(r"^(\w+) (?:dropped|discarded|put down|left) the (\w+)\.$")


def _replay(facts):
    """Rooms of people, and every room each object was in, in order, from the sentences alone."""
    person_room, holder, object_rooms = {}, {}, {}
    for fact in facts:
        if m := MOVE.match(fact):
            person_room[m[1]] = m[2]
            for item, who in holder.items():
                if who == m[1]:
                    object_rooms[item].append(m[2])
        elif m := TAKE.match(fact):
            assert holder.get(m[2]) is None, fact  # nobody holds what is taken
            rooms = object_rooms.setdefault(m[2], [])
            assert not rooms or rooms[-1] == person_room[m[1]], fact  # taken where it lies
            holder[m[2]] = m[1]
            rooms.append(person_room[m[1]])
        elif m := DROP.match(fact):
            assert holder.get(m[2]) == m[1], fact
            holder[m[2]] = None
        else:
            raise AssertionError(f"not bAbI's grammar: {fact}")
    return person_room, object_rooms


def _answer(question, facts):
    person_room, object_rooms = _replay(facts)
    if m := re.match(r"^Where is (\w+)\?$", question):
        return person_room[m[1]]
    if m := re.match(r"^Where is the (\w+)\?$", question):
        return object_rooms[m[1]][-1]
    m = re.match(r"^Where was the (\w+) before the (\w+)\?$", question)
    rooms = [r for i, r in enumerate(object_rooms[m[1]]) if i == 0 or r != object_rooms[m[1]][i - 1]]
    assert rooms[-1] == m[2], question
    return rooms[-2]


@pytest.mark.parametrize("task", ["qa1", "qa2", "qa3"])
def test_every_generated_answer_is_what_the_story_says(task):
    samples = parse_babi(generate_babi(task, 60, 7))
    assert len(samples) > 100
    for sample in samples:
        assert _answer(sample.question, sample.facts) == sample.answer, sample
        assert all(0 <= i < len(sample.facts) for i in sample.supporting)
    assert parse_babi(generate_babi(task, 5, 7)) == parse_babi(generate_babi(task, 5, 7))
    assert parse_babi(generate_babi(task, 5, 7)) != parse_babi(generate_babi(task, 5, 8))


def test_a_story_with_several_questions_becomes_one_sample_per_question():
    text = (
        "1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n3 John moved to the office.\n"
        "4 Where is John?\toffice\t3\n1 Sandra went to the garden.\n2 Where is Sandra?\tgarden\t1\n"
    )
    first, second, third = parse_babi(text)
    assert first.facts == ("Mary went to the kitchen.",) and first.answer == "kitchen"
    assert second.facts == ("Mary went to the kitchen.", "John moved to the office.")  # no earlier question
    assert second.supporting == (1,) and third.facts == ("Sandra went to the garden.",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Mary went home.\n", "line 1: not a numbered bAbI line"),
        ("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\n", "line 2: a question needs"),
        ("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t7\n", "line 2: a supporting fact"),
        ("1 Mary went to the kitchen.\n", "holds no questions"),
    ],
)
def test_a_malformed_file_is_one_line(text, message):
    with pytest.raises(CocaEvalError, match=message):
        parse_babi(text)
