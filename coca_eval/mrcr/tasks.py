"""MRCR's tasks: one per needle count (``2needle``, ``4needle``, ``8needle``, as OpenAI's files are
named), each with the answer budget of the source it reads."""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.mrcr.generate import ANSWER_BUDGET

PUBLISHED_ANSWER_BUDGET = 2048
"""OpenAI's and DeepMind's answers were written by a model and run to several hundred tokens (a blog
post, a story): the published rows get room for the longest of them. A generated answer is one book
passage."""

GENERATE, OPENAI, DEEPMIND = "generate", "openai", "deepmind"
SOURCES = (GENERATE, OPENAI, DEEPMIND)


@dataclass(frozen=True)
class MrcrTask:
    name: str
    needles: int
    answer_budget: int = ANSWER_BUDGET
    haystack: str = "books"


NAMES = ("2needle", "4needle", "8needle")
TASKS = {GENERATE: {n: MrcrTask(n, int(n[0])) for n in NAMES}}
for source in (OPENAI, DEEPMIND):
    TASKS[source] = {n: MrcrTask(n, int(n[0]), PUBLISHED_ANSWER_BUDGET, source) for n in NAMES}


def task_of(name: str, source: str = GENERATE) -> MrcrTask:
    return TASKS[source][name]
