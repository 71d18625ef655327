"""``--source generate`` prompts: exactly N minus the answer budget tokens with and without a chat
template; the facts appear whole and in order, after the first book sentence, at their recorded
depths; no noise sentence names anything of the sample, so the answer is the bAbI answer, for every
sample; BABILong's prompt text around them."""

from __future__ import annotations

import re

import pytest

from coca_eval.babilong.babi import generate_babi, parse_babi
from coca_eval.babilong.noise import entities
from coca_eval.babilong.prompt_task import ANSWER_BUDGET, layout, prompt_task
from coca_eval.babilong.prompts import formatted_input, task_labels
from coca_eval.chat import chat_frame
from coca_eval.generation.assembly import ExactPromptBuilder


def _build(tokenizer, task, length, count, chat=None, keep=("instruction", "examples", "post_prompt")):
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    samples = parse_babi(generate_babi(task, 20, 1))
    builder = ExactPromptBuilder(encode, None, chat)
    spec = prompt_task(task, samples, keep)
    return samples, [builder.build_one(spec, length, i, 42, length - ANSWER_BUDGET) for i in range(count)]


@pytest.mark.parametrize("task", ["qa1", "qa2", "qa3"])
@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_budget(task, with_chat, ruler_tokenizer, tokenizer_name, chat_templates):
    tokenizer = ruler_tokenizer(tokenizer_name)
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    for length in (1500, 3000):
        _, built = _build(tokenizer, task, length, 4, chat)
        assert [len(s.ids) for s in built] == [length - ANSWER_BUDGET] * 4


@pytest.mark.parametrize("task", ["qa1", "qa2", "qa3"])
def test_facts_are_whole_in_order_and_the_noise_names_nothing_of_the_sample(task, ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    samples, built = _build(tokenizer, task, 4000, 12)
    for i, sample in enumerate(built):
        story = samples[i]
        text = tokenizer.decode(sample.ids, skip_special_tokens=True)
        context = text.split("<context>\n", 1)[1].split("\n</context>", 1)[0]
        at, end = [], 0
        for fact in story.facts:  # every fact whole, each after the one before it
            at.append(context.index(fact, end))
            end = at[-1] + len(fact)
        assert at[0] > 0  # after book text
        noise = context
        for fact in story.facts:
            noise = noise.replace(fact, " ")
        banned = entities(story, task_labels(task))
        assert not {w.lower() for w in re.findall(r"[A-Za-z]+", noise)} & banned
        assert sample.answers == (story.answer,) and text.endswith(f"Question: {story.question}")
        depths = sample.detail["depths"]
        assert depths == sorted(depths) and len(depths) == len(story.facts)


def test_the_text_around_the_context_is_babilongs_formatted_input(ruler_tokenizer):
    """With the noise taken out, the prompt reads as BABILong's get_formatted_input of the facts."""
    tokenizer = ruler_tokenizer("zoo")
    for keep in (("instruction", "examples", "post_prompt"), ("post_prompt",), ()):
        samples, (sample,) = _build(tokenizer, "qa2", 2500, 1, keep=keep)
        text = tokenizer.decode(sample.ids, skip_special_tokens=True)
        head, rest = text.split("<context>\n", 1)
        tail = rest.split("\n</context>", 1)[1]
        expected = formatted_input("qa2", "CONTEXT", samples[0].question, keep)
        assert head + "<context>\nCONTEXT\n</context>" + tail == expected
    assert layout("qa1", ()).startswith("<context>\n{context}")
