"""RULER prompts: exactly N tokens for every task, length and tokenizer, with and without a chat template,
holding what the task plants the number of times it plants it; same seed, same prompts."""

from __future__ import annotations

import re

import pytest

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError
from coca_eval.ruler.prompts import RulerPromptBuilder
from coca_eval.ruler.scoring import score_sample
from coca_eval.ruler.tasks import RULER_TASKS, RulerTask

LENGTHS = (1024, 2048, 4096)
SAMPLES = 2
NIAH_TASKS = [n for n in RULER_TASKS.names() if n.startswith("niah")]


def encoder(tokenizer):
    return lambda text: tokenizer(text, add_special_tokens=False).input_ids


def make_builder(tokenizer, chat: str = "none", **kwargs) -> RulerPromptBuilder:
    adds_bos = tokenizer("a").input_ids[0] == tokenizer.bos_token_id
    frame = chat_frame(chat, tokenizer)
    return RulerPromptBuilder(
        encoder(tokenizer), tokenizer.bos_token_id if adds_bos else None, frame, **kwargs
    )


def decoded(tokenizer, ids) -> str:
    return tokenizer.decode(ids, skip_special_tokens=True)


def check_niah(task: RulerTask, text: str, sample) -> None:
    needle = re.compile(rf"One of the special magic {task.value_type} for (.+?) is: ([\w-]+)\.")
    planted = needle.findall(text)
    if task.haystack != "needle":  # the needle haystack is made of other needles
        assert len(planted) == task.needles
    for answer in sample.answers:
        assert [v for _, v in planted].count(answer) == 1 and text.count(answer) == 1
    assert len(sample.detail["depths"]) == len(sample.answers)
    assert sample.detail["haystack"] in ("noise", "needle") or task.haystack == "essay"


CHECKS = {"niah": check_niah}


def check_prompt(tokenizer, builder, task: RulerTask, length: int, sample) -> None:
    assert len(sample.ids) == length
    text = decoded(tokenizer, sample.ids)
    answer_prefix = task.wording(task.answer_prefix).split("{")[0].strip()
    assert answer_prefix in text[-300:]
    if builder.chat is not None:
        assert sample.ids[: len(builder.head)] == builder.head
        assert builder.chat.tail == sample.ids[-len(builder.chat.tail) - 40 :][: len(builder.chat.tail)] or (
            _contains(sample.ids, builder.chat.tail)
        )
    CHECKS[task.family](task, text, sample)


def _contains(ids: list[int], part: list[int]) -> bool:
    return any(ids[i : i + len(part)] == part for i in range(len(ids) - len(part), -1, -1))


@pytest.mark.parametrize("task_name", NIAH_TASKS)
def test_exact_length_prompts_hold_what_the_task_plants(ruler_tokenizer, tokenizer_name, task_name):
    tokenizer = ruler_tokenizer(tokenizer_name)
    task = RULER_TASKS.get(task_name)
    builder = make_builder(tokenizer)
    for length in LENGTHS:
        samples = builder.build(task_name, length, SAMPLES, seed=3)
        assert [s.index for s in samples] == list(range(SAMPLES))
        for sample in samples:
            check_prompt(tokenizer, builder, task, length, sample)
            for other in samples:  # any two samples agree on the shorter of their shared prefixes
                shared = min(sample.shared_prefix, other.shared_prefix)
                assert other.ids[:shared] == sample.ids[:shared]
            assert score_sample(task, " ".join(sample.answers), sample.answers)["score"] == 1.0
            assert score_sample(task, "", sample.answers)["score"] == 0.0


def test_same_seed_same_prompts_other_seeds_and_lengths_differ(ruler_tokenizer):
    builder = make_builder(ruler_tokenizer("zoo"))
    first = builder.build("niah_single_1", 1024, 3, seed=5)
    assert first == make_builder(ruler_tokenizer("zoo")).build("niah_single_1", 1024, 3, seed=5)
    assert [s.answers for s in builder.build("niah_single_1", 1024, 3, seed=6)] != [s.answers for s in first]
    assert [s.answers for s in builder.build("niah_single_1", 2048, 3, seed=5)] != [s.answers for s in first]
    assert len({s.answers for s in first}) == 3


def test_noise_haystack_is_shared_before_the_first_needle(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    samples = make_builder(tokenizer).build("niah_single_1", 2048, 4, seed=0)
    for sample in samples:
        text = decoded(tokenizer, sample.ids[: sample.shared_prefix])
        assert "special magic numbers for" not in text and text.count("There and back again.") >= 0
        assert decoded(tokenizer, sample.ids[: sample.shared_prefix + 12]).count("One of the special") == 1
    depths = [s.detail["depths"][0] for s in samples]
    assert all(0 <= d <= 1 for d in depths) and len(set(depths)) == 4


def test_a_length_shorter_than_the_fixed_parts_is_refused_with_the_reason(ruler_tokenizer):
    builder = make_builder(ruler_tokenizer("zoo"))
    with pytest.raises(
        CocaEvalError, match=r"length 60 is too short for RULER task niah_single_1: .* take \d+"
    ):
        builder.build("niah_single_1", 60, 1, seed=0)
    with pytest.raises(CocaEvalError, match=r"niah_multivalue: .*4 needle\(s\)"):
        builder.build("niah_multivalue", 200, 1, seed=0)
