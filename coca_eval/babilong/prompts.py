"""BABILong's prompts: per task an instruction, worked examples and a post-prompt, in BABILong's template.

The texts are BABILong's protocol (booydar/babilong ``babilong/prompts.py``: ``DEFAULT_PROMPTS``,
``DEFAULT_TEMPLATE``), exported as they are to ``prompts.json`` by ``scripts/babilong_reference_values.py``
with the commit they came from; this module only reads and fills them. BABILong's evaluation grid also
runs prompts with parts left out (``instruction_no``, ``examples_no``, ``post_prompt_no``): a part left
out is an empty string in the same template, and the whole prompt is stripped, as BABILong's
``get_formatted_input`` does; the context is stripped before it goes in.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

PARTS = ("instruction", "examples", "post_prompt")


@cache
def _exported() -> dict:
    return json.loads((Path(__file__).with_name("prompts.json")).read_text(encoding="utf-8"))


def source_commit() -> str:
    """The BABILong commit the prompt texts were exported from."""
    return _exported()["babilong_commit"]


def template() -> str:
    return _exported()["template"]


def task_prompt(task: str) -> dict[str, str]:
    """The task's instruction, examples and post-prompt."""
    return dict(_exported()["prompts"][task])


def task_labels(task: str) -> list[str]:
    """The answers the task can have (BABILong's ``TASK_LABELS``), which its scoring looks for."""
    return list(_exported()["labels"][task])


def tasks() -> list[str]:
    """``qa1`` .. ``qa20``, in order."""
    return sorted(_exported()["prompts"], key=lambda name: int(name[2:]))


def formatted_input(task: str, context: str, question: str, keep: tuple[str, ...] = PARTS) -> str:
    """The prompt text for ``context`` and ``question``, with only the parts named in ``keep``."""
    prompt = task_prompt(task)
    parts = {part: prompt[part] if part in keep else "" for part in PARTS}
    return template().format(**parts, context=context.strip(), question=question).strip()
