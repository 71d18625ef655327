"""RULER's prompt builder: the base's exact-length assembly (:mod:`coca_eval.generation.assembly`) with
RULER's task families and data (the QA sets, the essay haystack) behind it."""

from __future__ import annotations

from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.generation.haystacks import BOOKS, load_essay
from coca_eval.ruler.qa_data import QaSet, load_qa
from coca_eval.ruler.tasks import RULER_TASKS


def check_sources(
    tasks: list[str] | tuple[str, ...], haystack: str = BOOKS, qa_data: str | None = None
) -> None:
    """Load what the tasks will read (the essay haystack, the QA sets) now, so a bad ``--haystack`` or
    ``--qa-data`` is a one-line error before any model loads. Both stay cached for the builder."""
    specs = [RULER_TASKS.get(name) for name in tasks]
    if any(t.haystack == "essay" for t in specs):
        load_essay(haystack)
    for dataset in dict.fromkeys(t.dataset for t in specs if t.family == "qa"):
        load_qa(dataset, qa_data)


class RulerPromptBuilder(ExactPromptBuilder):
    """Builds every RULER task's prompts for one tokenizer (and chat frame); ``qa_data`` is a local
    SQuAD/HotpotQA file instead of the hub (:mod:`coca_eval.ruler.qa_data`)."""

    kind = "RULER task"

    def __init__(self, *frame, qa_data: str | None = None, **settings) -> None:
        """``frame`` and ``settings``: the base builder's tokenizer, BOS, chat frame and haystack."""
        super().__init__(*frame, definitions=RULER_TASKS.get, **settings)
        self.qa_data = qa_data

    def qa_set(self, dataset: str) -> QaSet:
        return load_qa(dataset, self.qa_data)
