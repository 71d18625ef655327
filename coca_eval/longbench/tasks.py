"""LongBench v1's tasks as its ``pred.py`` runs them: each task's prompt template and answer budget are
LongBench's own configuration (``pred_config.json`` beside this module, copied verbatim from THUDM/
LongBench at 2e00731, ``LongBench/config/dataset2prompt.json`` and ``dataset2maxlen.json``), because a
number is comparable with the published tables only on the same prompt to the character. Which tasks
go through a chat template, and samsum's stop on the newline, are ``pred.py``'s rules too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.longbench.averages import CATEGORIES, CHINESE_TASKS, LONGBENCH_E_TASKS, TASKS

COMMIT = "2e00731f8d0bff23dc4325161044d0ed8af94c1e"
CONFIG = Path(__file__).with_name("pred_config.json")

WITHOUT_CHAT = frozenset({"trec", "triviaqa", "samsum", "lsht", "lcc", "repobench-p"})
"""The tasks ``pred.py`` gives a chat model without its chat format: few-shot examples and code, which
a chat model continues better as plain text."""

NEWLINE_STOP = frozenset({"samsum"})
"""samsum's answers stop at the first newline: ``pred.py`` adds the newline token to the stop tokens,
since models otherwise run on into another "Dialogue:" example."""


@dataclass(frozen=True)
class LongBenchTask:
    name: str
    template: str  # LongBench's prompt, with {context} and {input}
    answer_budget: int  # LongBench's max_gen (new tokens)
    category: str
    language: str  # "en", "zh", or "code"
    chat: bool  # whether pred.py frames the prompt as a chat turn

    @property
    def haystack(self) -> str:
        return "longbench"

    def prompt(self, row) -> str:
        """The task's prompt for a row, filled as ``pred.py`` fills it (``str.format`` of the row)."""
        return self.template.format(**row.fields())


@cache
def _config() -> dict:
    return json.loads(CONFIG.read_text(encoding="utf-8"))["tasks"]


def _category(name: str) -> str:
    return next(c for c, names in CATEGORIES.items() if name in names)


def _language(name: str) -> str:
    if name in CATEGORIES["Code Completion"]:
        return "code"
    return "zh" if name in CHINESE_TASKS else "en"


@cache
def task_of(name: str) -> LongBenchTask:
    """The task ``name`` names (LongBench's dataset name; LongBench-E's ``_e`` names read the same)."""
    base = name.removesuffix("_e")
    config = _config().get(base)
    if config is None:
        raise CocaEvalError(f"unknown LongBench task {name!r} (valid: {', '.join(TASKS)})")
    language = _language(base)
    return LongBenchTask(
        base, config["prompt"], config["answer_budget"], _category(base), language, base not in WITHOUT_CHAT
    )


NAMES = TASKS
E_NAMES = LONGBENCH_E_TASKS
