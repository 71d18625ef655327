"""One LongBench sample's record and when its decoding stops: the score is LongBench's own
(:func:`coca_eval.longbench.scoring.sample_score`, its metric of the task against the best reference,
the first line for the few-shot tasks), and samsum stops at its first newline as ``pred.py`` has it."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.backends.stopping import StopRule
from coca_eval.longbench.tasks import NEWLINE_STOP


def score_answer(task, output: str, answers: Sequence[str], record: dict | None = None) -> dict:
    """``score`` in [0, 1]; the classification tasks read the sample's ``all_classes``."""
    from coca_eval.longbench.scoring import sample_score

    classes = (record or {}).get("all_classes")
    return {"score": sample_score(task.name, output, answers, classes)}


def _past_first_line(text: str) -> bool:
    """Whether the answer has ended its first line: ``pred.py`` stops on the newline token, and never on
    the first token (its ``min_length``), so newlines before any text do not stop it here either."""
    return "\n" in text.lstrip("\n")


def stop_rule(task) -> StopRule:
    """EOS or the task's budget; samsum also at the end of its first line (all that is scored of it)."""
    return StopRule(task.answer_budget, _past_first_line if task.name in NEWLINE_STOP else None)
