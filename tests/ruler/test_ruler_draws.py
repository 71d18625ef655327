"""What RULER's samples are made of, checked on their content (the prompt tests check their shape):
distinct needles, the asked key chosen among all, draws of their own per task, the question's count of
variables, cwe's setting switching at RULER's 4k, cwe filling its list as far as it fits, fwe's
vocabulary size, and where the pieces of a prompt meet."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from coca_eval.generation.draws import SampleKey
from coca_eval.generation.segments import take
from coca_eval.ruler import niah
from coca_eval.ruler.common_words import draw_cwe
from coca_eval.ruler.frequent_words import draw_fwe
from coca_eval.ruler.tasks import RULER_TASKS
from tests.ruler.test_ruler_prompts import decoded, make_builder


def _recorded(monkeypatch) -> list[list[str]]:
    """Every list of keys or values a draw takes, in order (keys first)."""
    drawn: list[list[str]] = []
    real = niah._distinct

    def recording(kind, rng, n, taken):
        values = real(kind, rng, n, taken)
        drawn.append(values)
        return values

    monkeypatch.setattr(niah, "_distinct", recording)
    return drawn


@pytest.mark.parametrize("task", ["niah_multikey_1", "niah_multivalue", "niah_multiquery"])
def test_needle_keys_and_values_are_all_distinct(monkeypatch, ruler_tokenizer, task):
    """RULER draws keys and values without repeats, and no value equals a key (one ``taken`` set).
    Every key and value comes from eight strings here, so collisions are certain without the rule."""
    monkeypatch.setattr(niah, "random_value", lambda kind, rng: f"v{rng.randrange(8)}")
    drawn = _recorded(monkeypatch)
    spec = RULER_TASKS.get(task)
    kit = make_builder(ruler_tokenizer("zoo"))
    for index in range(20):
        drawn.clear()
        draw = niah.draw_niah(spec, random.Random(index), kit, SampleKey(0, 4096, index))
        everything = [v for values in drawn for v in values]
        assert len(everything) == max(spec.keys, spec.queries) * (1 + spec.values)
        assert len(set(everything)) == len(everything), drawn
        assert len(draw.answers) == spec.values * spec.queries


def test_the_asked_keys_are_drawn_among_all_keys(monkeypatch, ruler_tokenizer):
    """The queried key is any of the planted keys (RULER samples it), not always the first drawn."""
    drawn = _recorded(monkeypatch)
    spec = RULER_TASKS.get("niah_multikey_1")  # four keys, one asked
    kit = make_builder(ruler_tokenizer("zoo"))
    positions = set()
    for index in range(40):
        drawn.clear()
        draw = niah.draw_niah(spec, random.Random(index), kit, SampleKey(0, 4096, index))
        positions.add(drawn[0].index(draw.fields["query"]))
    assert positions == {0, 1, 2, 3}


def test_each_task_draws_its_own_samples(ruler_tokenizer):
    """The seed includes the task: two tasks that draw the same kinds (one key, one number) at one
    length and index must not plant the same needle."""
    builder = make_builder(ruler_tokenizer("zoo"))
    one = builder.build("niah_single_1", 1024, 5, seed=0)
    two = builder.build("niah_single_2", 1024, 5, seed=0)
    assert all(a.answers != b.answers for a, b in zip(one, two, strict=True))


def test_vt_asks_for_as_many_variables_as_it_answers(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    for sample in make_builder(tokenizer).build("vt", 2048, 3, seed=1):
        text = decoded(tokenizer, sample.ids)
        *_, count = re.findall(r"(\d+) variables are assigned the value", text)  # the question's (last)
        assert int(count) == len(sample.answers) == RULER_TASKS.get("vt").hops + 1


@pytest.mark.parametrize(("length", "small"), [(4095, True), (4096, False)])
def test_cwe_takes_rulers_lighter_setting_below_4096_only(ruler_tokenizer, length, small):
    spec = RULER_TASKS.get("cwe")
    kit = make_builder(ruler_tokenizer("zoo"))
    draw = draw_cwe(spec, random.Random(0), kit, SampleKey(0, length, 0))
    context = draw.fill(length - 300)
    expected = [6, 1] if small else [spec.common_repeats, spec.uncommon_repeats]
    assert context.detail["repeats"] == expected
    example_words = len(re.findall(r"\d+\. ", draw.lead.split("Answer:")[0]))
    assert example_words == (10 * 3 + 10 * 1 if small else 10 * 10 + 30 * 3)  # common x repeats + rest x once


def test_cwe_lists_one_more_word_as_soon_as_it_fits(ruler_tokenizer):
    """At the smallest budget that holds one more distinct word, the list holds it and nothing after
    it: a word that fits exactly is taken."""
    tokenizer = ruler_tokenizer("zoo")
    spec = RULER_TASKS.get("cwe")
    kit = make_builder(tokenizer)

    def fill(budget: int):
        draw = draw_cwe(spec, random.Random(3), kit, SampleKey(0, 2048, 0))
        return draw.fill(budget)

    start = fill(1500).detail["distinct_words"]
    budget = next(b for b in itertools.count(1500) if fill(b).detail["distinct_words"] > start)
    context = fill(budget)
    text = decoded(tokenizer, context.ids)
    items = re.findall(r"\d+\. \S+", text)
    repeats, once = context.detail["repeats"]
    words = context.detail["distinct_words"]
    assert len(items) == spec.common_words * repeats + (words - spec.common_words) * once
    assert re.fullmatch(r"(\s*\d+\. \S+)+", text), text[-60:]  # nothing cut after the last word


def test_fwe_vocabulary_follows_rulers_size_for_the_prompt_part_of_n(ruler_tokenizer):
    """RULER: vocabulary = (N - tokens_to_generate) // 50; at N = 4096 with fwe's 50-token budget, 80."""
    spec = RULER_TASKS.get("fwe")
    kit = make_builder(ruler_tokenizer("zoo"))
    draw = draw_fwe(spec, random.Random(0), kit, SampleKey(0, 4096, 0))
    assert spec.answer_budget == 50
    assert draw.fill(3900).detail["vocabulary"] == 80


def test_pieces_end_where_the_stream_is_cut():
    """A piece that ends exactly at the cut still has its end among the boundaries."""
    stream = take(iter([[1, 2], [3, 4], [5, 6]]), 4)
    assert stream.ids == [1, 2, 3, 4] and stream.bounds == [0, 2, 4]
    assert take(iter([[1, 2], [3, 4, 5]]), 4).bounds == [0, 2]


def test_a_template_space_before_the_context_is_not_doubled(ruler_tokenizer):
    """fwe's template puts a space before its context, whose words carry their own: one space."""
    tokenizer = ruler_tokenizer("zoo")
    (sample,) = make_builder(tokenizer).build("fwe", 2048, 1, seed=0)
    text = decoded(tokenizer, sample.ids)
    assert "coded words. " in text and "coded words.  " not in text


@pytest.mark.parametrize("chat", [False, True], ids=["base", "chat"])
def test_the_text_span_is_the_prompt_after_bos(ruler_tokenizer, chat_templates, chat):
    """A sample's text span (what a text API is sent) starts after BOS and any chat head."""
    from coca_eval.chat import chat_frame
    from coca_eval.ruler.prompts import RulerPromptBuilder
    from tests.ruler.test_ruler_prompts import encoder

    tokenizer = ruler_tokenizer("zoo")
    frame = chat_frame(str(chat_templates["simple"]), tokenizer) if chat else None
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else 0
    builder = RulerPromptBuilder(encoder(tokenizer), bos, frame)  # a model whose prompts open with BOS
    (sample,) = builder.build("niah_single_1", 1024, 1, seed=0)
    start, end = sample.text_span
    assert sample.ids[0] == bos and sample.ids[:start] == builder.head and end <= len(sample.ids)
    assert start >= 1 and bos not in sample.ids[start:end]


def _find(ids: list[int], part: list[int], start: int = 0) -> int:
    return next(i for i in range(start, len(ids) - len(part) + 1) if ids[i : i + len(part)] == part)


def test_cwe_frames_its_worked_example_as_a_turn_of_its_own_with_a_chat_template(
    ruler_tokenizer, chat_templates
):
    """RULER (common_words_extraction.py at c3f5e3b) formats cwe's example with the whole chat-wrapped
    template plus its answer, then a newline and the task's framed prompt: the frame's tail comes twice,
    the example's answer after the first, the frame's head (without a second BOS) again after it."""
    from coca_eval.chat import chat_frame
    from coca_eval.ruler.prompts import RulerPromptBuilder
    from tests.ruler.test_ruler_prompts import encoder

    tokenizer = ruler_tokenizer("zoo")
    frame = chat_frame(str(chat_templates["simple"]), tokenizer)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else 0
    builder = RulerPromptBuilder(encoder(tokenizer), bos, frame)
    (sample,) = builder.build("cwe", 3000, 1, seed=0)
    ids = sample.ids
    head = frame.head[1:] if frame.head[:1] == [bos] else frame.head
    first_tail = _find(ids, frame.tail)
    second_head = _find(ids, head, first_tail)
    second_tail = _find(ids, frame.tail, second_head)
    assert ids.count(bos) == 1 and len(ids) == 3000
    example_answer = decoded(tokenizer, ids[first_tail + len(frame.tail) : second_head])
    assert re.fullmatch(
        r"Answer: The top 10 words that appear most often in the list are: (\d+\. \S+ ?){10}\n",
        example_answer,
    )
    example_user = decoded(tokenizer, ids[len(builder.head) : first_tail])
    assert example_user.startswith("Below is a numbered list of words.") and example_user.endswith(
        "in the above list?"
    )
    task_user = decoded(tokenizer, ids[second_head + len(head) : second_tail])
    assert task_user.startswith("Below is a numbered list of words.") and "Answer:" not in task_user
    plain = RulerPromptBuilder(encoder(tokenizer), bos, None).build("cwe", 3000, 1, seed=0)[0]
    assert plain.answers == sample.answers and decoded(tokenizer, plain.ids).count("Answer: The top 10") == 2
