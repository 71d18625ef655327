"""Replies of another shape than the completions API's are one line naming what was wrong."""

from __future__ import annotations

import pytest

from coca_eval.backends.openai_replies import Completion, ModelList, ordered_choices, parse_reply
from coca_eval.errors import CocaEvalError

WHERE = "the reply of http://h/v1 to /completions"
CHOICE = {"index": 0, "text": "", "logprobs": {"token_logprobs": [None, -1.5]}}


@pytest.mark.parametrize(
    ("shape", "reply", "message"),
    [
        (Completion, [CHOICE], "is a list, not a JSON object"),
        (Completion, None, "is null, not a JSON object"),
        (Completion, {"object": "text_completion"}, "is malformed: no 'choices'"),
        (Completion, {"choices": [{"text": ""}]}, "is malformed: choices[0] has no 'index'"),
        (Completion, {"choices": {"0": CHOICE}}, "is malformed: choices: Input should be a valid list"),
        (
            Completion,
            {"choices": [{**CHOICE, "logprobs": {"token_logprobs": "many"}}]},
            "is malformed: choices[0].logprobs.token_logprobs: Input should be a valid list",
        ),
        (ModelList, {"data": [{"object": "model"}]}, "is malformed: data[0] has no 'id'"),
        (ModelList, {"models": ["tiny"]}, "is malformed: no 'data'"),
    ],
)
def test_each_wrong_shape_is_named(shape, reply, message):
    with pytest.raises(CocaEvalError) as caught:
        parse_reply(shape, reply, WHERE)
    assert str(caught.value) == f"{WHERE} {message}"


def test_extra_fields_are_ignored_and_choices_come_in_prompt_order():
    reply = {"id": "x", "choices": [{**CHOICE, "index": 1, "extra": 3}, CHOICE], "usage": {}}
    choices = ordered_choices(parse_reply(Completion, reply, WHERE), 2, WHERE)
    assert [c.index for c in choices] == [0, 1] and choices[0].logprobs.token_logprobs == [None, -1.5]


@pytest.mark.parametrize("indices", [[0], [0, 0], [0, 2], [1, 2, 3]])
def test_choices_must_be_one_per_prompt(indices):
    completion = parse_reply(Completion, {"choices": [{**CHOICE, "index": i} for i in indices]}, WHERE)
    with pytest.raises(CocaEvalError, match=r"for 2 prompt\(s\); expected one per prompt"):
        ordered_choices(completion, 2, WHERE)
