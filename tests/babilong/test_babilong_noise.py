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
        assert len(sample.detail["depths"]) == len(story.facts)


def _find(ids: list[int], tokens: list[int], start: int) -> int:
    """Where ``tokens`` first occur in ``ids`` at or after ``start``."""
    for at in range(start, len(ids) - len(tokens) + 1):
        if ids[at : at + len(tokens)] == tokens:
            return at
    raise AssertionError(f"{tokens} not in the context after token {start}")


@pytest.mark.parametrize("task", ["qa1", "qa2", "qa3"])
def test_each_facts_depth_is_where_its_tokens_start_in_the_context(task, ruler_tokenizer):
    """A fact's recorded depth is the share of the context's tokens before it: each fact's own tokens
    are found in the drawn context and their offset, over the budget, must be the depth recorded. The
    first fact comes after at least one book sentence."""
    import random

    from coca_eval.babilong.noise import draw_babilong
    from coca_eval.generation.draws import SampleKey

    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    samples = parse_babi(generate_babi(task, 20, 1))
    kit, budget = ExactPromptBuilder(encode, None, None), 3000
    for index in range(6):
        key = SampleKey(42, 4000, index)
        draw = draw_babilong(None, random.Random(index), kit, key, samples, task_labels(task))
        context = draw.fill(budget)
        assert len(context.ids) == budget
        at, end = [], 0
        for fact in samples[index].facts:
            tokens = encode(" " + fact)
            at.append(_find(context.ids, tokens, end))
            end = at[-1] + len(tokens)
        assert at[0] >= 10  # a whole book sentence (ten tokens at least) before the first fact
        assert context.detail["depths"] == [round(place / budget, 4) for place in at]


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


class _Pieces:
    """Tokens are whitespace-separated words here, so a sentence's length is its word count."""

    @staticmethod
    def piece(text: str) -> list[str]:
        return text.split()


class _Kit:
    def __init__(self, sentences: list[str]):
        self.pieces, self._sentences = _Pieces(), sentences

    def essay(self):
        from types import SimpleNamespace

        return SimpleNamespace(sentences=self._sentences)


def test_noise_keeps_sentences_of_ten_tokens_and_skips_shorter_ones():
    """BABILong's SentenceSampler keeps a sentence of at least ``min_sentence_len`` (10) tokens."""
    from itertools import islice

    from coca_eval.babilong.noise import _noise

    sentences = [" ".join(["word"] * n) + "." for n in (9, 10, 11, 3, 10)]
    kept = list(islice(_noise(_Kit(sentences), 0, set()), 6))
    assert [len(p) for p in kept] == [10, 11, 10, 10, 11, 10]


def test_each_sample_reads_the_book_on_from_a_place_of_its_own(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    _, built = _build(tokenizer, "qa1", 1500, 8)
    openings = set()
    for sample in built:
        text = tokenizer.decode(sample.ids, skip_special_tokens=True)
        openings.add(text.split("<context>\n", 1)[1][:60])
    assert len(openings) == 8
