"""RULER's scoring: its output post-processing, then ``string_match_all`` or ``string_match_part``.

Both metrics are case-insensitive substring tests of each reference in the post-processed output.
``string_match_all`` (NIAH, vt, cwe, fwe) credits the fraction of references found; ``string_match_part``
(QA, whose references are alternative phrasings of one answer) credits 1 when any is found. These are
RULER's per-sample definitions; a task's score is their mean times 100, left to the caller. (Some ports
take the maximum fraction over a batch for ``string_match_part`` instead, which is not RULER's metric.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.ruler.tasks import STRING_MATCH_ALL, STRING_MATCH_PART, RulerTask

_CONTROL = re.compile(r"[\x00-\x1f]")


def postprocess(output: str) -> str:
    """Strip, turn every control character (tab and newline included) into a newline, strip again."""
    return _CONTROL.sub("\n", output.strip()).strip()


def _found(output: str, answers: Sequence[str]) -> list[bool]:
    text = postprocess(output).lower()
    return [answer.lower() in text for answer in answers]


def string_match_all(output: str, answers: Sequence[str]) -> float:
    """The fraction of ``answers`` found in ``output``."""
    if not answers:
        raise ValueError("string_match_all needs at least one reference")
    found = _found(output, answers)
    return sum(found) / len(found)


def string_match_part(output: str, answers: Sequence[str]) -> float:
    """1.0 when any of ``answers`` is found in ``output``, else 0.0."""
    if not answers:
        raise ValueError("string_match_part needs at least one reference")
    return 1.0 if any(_found(output, answers)) else 0.0


METRICS = {STRING_MATCH_ALL: string_match_all, STRING_MATCH_PART: string_match_part}


def score_sample(task: RulerTask, output: str, answers: Sequence[str], record: dict | None = None) -> dict:
    """``{"score": the task's metric, "found": which references the output holds}``."""
    return {"score": METRICS[task.metric](output, answers), "found": _found(output, answers)}
