"""A BABILong task as the base's exact-length builder takes it (``--source generate``): BABILong's
template with the kept prompt parts filled in, the context left to the noise family, no answer prefix
(BABILong's prompt ends at the question; a chat template opens the assistant's turn after it)."""

from __future__ import annotations

from functools import partial

from coca_eval.babilong.noise import draw_babilong
from coca_eval.babilong.prompts import PARTS, task_labels, task_prompt, template
from coca_eval.generation.assembly import PromptTask

ANSWER_BUDGET = 20  # BABILong's evaluation notebook: max_new_tokens 20


def layout(task: str, keep: tuple[str, ...] = PARTS) -> str:
    """BABILong's template with the kept parts filled in and ``{context}``, ``{question}`` left open;
    stripped at its start, as BABILong strips the whole prompt."""
    prompt = task_prompt(task)
    parts = {part: prompt[part] if part in keep else "" for part in PARTS}
    return template().format(**parts, context="{context}", question="{question}").lstrip()


def prompt_task(task: str, samples: list, keep: tuple[str, ...] = PARTS) -> PromptTask:
    family = partial(draw_babilong, samples=samples, labels=task_labels(task))
    return PromptTask(task, family, ANSWER_BUDGET, template=layout(task, keep))
