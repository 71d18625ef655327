"""HELMET's prompts under the exact protocol: every prompt is N minus the task's answer budget, chat
template on and off; json_kv's gold and demonstration pairs are whole and where the record says; the
recall tasks draw RULER's needles and read in HELMET's layout."""

from __future__ import annotations

import json

import pytest

from coca_eval.chat import chat_frame
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.json_kv import PAIR
from coca_eval.helmet.prompts import HelmetPromptBuilder, prompt_task
from coca_eval.helmet.tasks import HELMET_TASKS
from coca_eval.ruler.prompts import RulerPromptBuilder

TASKS = [t for t in HELMET_TASKS.names() if HELMET_TASKS.get(t).family in ("json_kv", "ruler")]


def _builder(tokenizer, chat=None):
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    return HelmetPromptBuilder(ExactPromptBuilder(encode, tokenizer.bos_token_id, chat))


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_answer_budget(
    task, with_chat, ruler_tokenizer, tokenizer_name, chat_templates
):
    tokenizer = ruler_tokenizer(tokenizer_name)
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    budget = HELMET_TASKS.get(task).answer_budget
    for length in (1024, 1500):
        samples = _builder(tokenizer, chat).build(task, length, 4, 7, length - budget)
        assert [len(s.ids) for s in samples] == [length - budget] * 4
        if chat is not None:  # HELMET opens the assistant's turn empty: the prompt ends with the frame
            assert all(s.ids[-len(chat.tail) :] == chat.tail for s in samples)


def test_json_kv_pairs_are_whole_and_the_gold_sits_at_its_recorded_depth(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    for sample in _builder(tokenizer).build("json_kv", 2000, 6, 11, 1900):
        text = tokenizer.decode(sample.ids, skip_special_tokens=True)
        context, question = text.split("\n\nExtract the value")
        key = question.rsplit("Key: ", 1)[1].split("\n")[0]
        gold = PAIR.format(key=json.loads(key), value=sample.answers[0])
        assert context.count(gold) == 1  # the gold pair whole, once
        demos = [line for line in question.split("\n") if line.startswith("Corresponding value: ")]
        assert len(demos) == 2 and all(d.split(": ", 1)[1] in context for d in demos)  # demos are pairs
        depth = sample.detail["depths"][0]
        assert abs(context.index(gold) / len(context) - depth) < 0.1  # characters ~ tokens here
        assert context.startswith('{"') and context.endswith("}")


def test_json_kv_depths_spread_over_the_object(ruler_tokenizer):
    samples = _builder(ruler_tokenizer("zoo")).build("json_kv", 3000, 40, 1, 2900)
    depths = [s.detail["depths"][0] for s in samples]
    assert min(depths) < 0.2 and max(depths) > 0.8
    assert len({s.answers for s in samples}) == 40


def test_base_prompts_end_with_helmets_answer_prefix_after_a_newline(ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    endings = {
        "json_kv": '"\nCorresponding value:',
        "ruler_niah_mk_2": "mentioned in the provided text?\nThe special magic number for",
        "ruler_niah_mv": "mentioned in the provided text?\nThe special magic numbers for",
    }
    for task, ending in endings.items():
        text = tokenizer.decode(_builder(tokenizer).build(task, 1200, 1, 5, 1100)[0].ids)
        assert ending in text[-200:], (task, text[-200:])
        assert text.endswith(("Corresponding value:", "in the provided text is", "in the provided text are"))


def test_recall_tasks_draw_rulers_needles(ruler_tokenizer):
    """ruler_niah_mk_2 at N asks what RULER's niah_multikey_2 asks at N with the same seed."""
    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    ruler = RulerPromptBuilder(encode, None, None).build("niah_multikey_2", 1500, 3, 9, 1372)
    helmet = _builder(tokenizer).build("ruler_niah_mk_2", 1500, 3, 9, 1450)
    assert [s.answers for s in ruler] == [s.answers for s in helmet]


def test_a_length_too_short_for_the_fixed_parts_is_one_clear_error(ruler_tokenizer):
    from coca_eval.errors import CocaEvalError

    with pytest.raises(CocaEvalError, match="too short for HELMET task json_kv"):
        _builder(ruler_tokenizer("zoo")).build("json_kv", 300, 1, 1, 200)


def test_the_prompt_task_keeps_helmets_budget_and_layout():
    task = prompt_task(HELMET_TASKS.get("ruler_niah_mk_3"), chat=False)
    assert task.answer_budget == 100 and task.answer_prefix.startswith("\nThe special magic")
    assert prompt_task(HELMET_TASKS.get("json_kv"), chat=True).answer_prefix == ""
