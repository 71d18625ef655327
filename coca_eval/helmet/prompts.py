"""HELMET prompts of exactly N minus the answer budget tokens, built by RULER's prompt builder.

A HELMET task is turned into the builder's task form (template, answer prefix, a family that draws
its samples), so the token accounting, BOS, chat frame and the check of every prompt's length are the
ones RULER's prompts go through (:mod:`coca_eval.ruler.prompts`). HELMET's layout differs from
RULER's in two places, both HELMET's (``prompt_template`` and ``tokenize()`` in its ``data.py`` and
``model_utils.py`` at 4526dfb): without a chat template its answer prefix (``system_template``) follows
the question after a newline, and with one the assistant's turn opens empty (HELMET renders the user
message with ``add_generation_prompt`` and nothing after it).

The recall tasks keep their RULER task's name for the draws, so ``ruler_niah_mk_2`` at N draws the
keys and values RULER's ``niah_multikey_2`` draws at N with the same seed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from coca_eval.helmet import json_kv
from coca_eval.helmet.tasks import HELMET_TASKS, SUBSTRING_EM, HelmetTask
from coca_eval.ruler.tasks import RULER_TASKS, RulerTask

FAMILIES = {"json_kv": "coca_eval.helmet.json_kv:draw_json_kv"}


def prompt_task(task: HelmetTask, chat: bool) -> RulerTask:
    """``task`` as RULER's builder takes it, laid out as HELMET lays it out with or without a chat
    template."""
    if task.family == "ruler":
        ruler = RULER_TASKS.get(task.ruler_task)
        prefix = ruler.answer_prefix.lstrip()
    elif task.family == "json_kv":
        ruler = RulerTask(
            task.name, FAMILIES["json_kv"], SUBSTRING_EM, task.answer_budget, "", json_kv.TEMPLATE
        )
        prefix = json_kv.ANSWER_PREFIX
    else:
        raise ValueError(f"no prompt builder for HELMET family {task.family!r}")
    return replace(ruler, answer_budget=task.answer_budget, answer_prefix="" if chat else "\n" + prefix)


class HelmetPromptBuilder:
    """HELMET's prompts for one tokenizer and chat frame, on a RULER prompt builder (``ruler``)."""

    def __init__(self, ruler: Any) -> None:
        self.ruler = ruler
        self.chat = ruler.chat is not None

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        spec = prompt_task(HELMET_TASKS.get(task), self.chat)
        return [self.ruler.build_one(spec, length, i, seed, prompt_length) for i in range(samples)]

    def haystack_name(self, task: HelmetTask) -> str | None:
        """The haystack of a RULER recall task (None for the others: they bring their own context)."""
        if task.family != "ruler":
            return None
        return self.ruler.haystack_name(RULER_TASKS.get(task.ruler_task))
