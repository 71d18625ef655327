"""LongBench v2's questions as tasks, one per domain, and its prompts as its ``pred.py`` fills them:
the templates are LongBench's own files (``v2_prompts.json`` beside this module, copied verbatim from
THUDM/LongBench at 2e00731, ``prompts/*.txt``), filled by plain replacement of ``$DOC$``, ``$Q$`` and
``$C_A$`` .. ``$C_D$`` with the stripped fields, since a number is comparable with the published
leaderboard only on the same prompt to the character.

Its templates: ``0shot`` (the document, the question and its four choices, then the answer format),
``0shot_no_context`` (the question alone: LongBench v2's "w/o context" baseline, which tells how much
of a score the document earns), and for the chain of thought (``--cot``) ``0shot_cot`` (the document
and question, then "Let's think step by step:") and ``0shot_cot_ans`` (the question and that reasoning,
the document left out). The answer budget is ``pred.py``'s 128 new tokens, the reasoning's 1,024.
LongBench v2 always sends its prompt as one user turn of a chat.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.longbench.v2_data import DOMAINS

TEMPLATES = Path(__file__).with_name("v2_prompts.json")
ANSWER_BUDGET, REASONING_BUDGET = 128, 1024
CONTEXTS = {"document": "0shot", "none": "0shot_no_context"}
"""``--context``: the document (LongBench v2's 0-shot run) or none (its "w/o context" baseline)."""


@cache
def template(name: str) -> str:
    return json.loads(TEMPLATES.read_text(encoding="utf-8"))["templates"][name]


@dataclass(frozen=True)
class DomainTask:
    name: str  # the domain's task name, single_document_qa ...
    domain: str  # as LongBench v2 writes it
    answer_budget: int = ANSWER_BUDGET
    chat: bool = True
    language: str = "en"

    @property
    def haystack(self) -> str:
        return "longbench_v2"

    @property
    def category(self) -> str:
        return self.domain

    def prompt(self, row, name: str = "0shot", reasoning: str | None = None) -> str:
        """The prompt for a question from LongBench v2's template ``name``, filled as ``pred.py`` fills
        it (``reasoning``: the chain of thought that ``0shot_cot_ans`` quotes)."""
        fields = {"$DOC$": row.context, "$Q$": row.question}
        fields |= {f"$C_{letter}$": text for letter, text in zip("ABCD", row.choices, strict=True)}
        if reasoning is not None:
            fields["$COT$"] = reasoning
        text = template(name)
        for marker, value in fields.items():  # pred.py's order: $DOC$ first, then $Q$ and the choices
            text = text.replace(marker, value.strip())
        return text


@cache
def domain_task(name: str) -> DomainTask:
    """The task ``name`` names (a domain of LongBench v2)."""
    if name not in DOMAINS:
        raise CocaEvalError(f"unknown LongBench v2 task {name!r} (valid: {', '.join(DOMAINS)})")
    return DomainTask(name, DOMAINS[name])


NAMES = tuple(DOMAINS)
