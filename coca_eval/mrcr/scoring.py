"""MRCR's grading, as OpenAI's dataset card grades: a response that does not start with the row's
random string scores 0; otherwise the random string is removed from the front of the response and of
the answer, and the score is :class:`difflib.SequenceMatcher`'s ratio of the two, made as the card
makes it (no junk test, the automatic junk heuristic for long texts left on). Nothing is stripped or
normalised first: a response that opens with a space before the string scores 0, as it does under
the card's grader.

A sample also records the chance floor of its conversation: the score of a reply that opens with the
string and copies one of the needles' answers drawn at random (a model that found the needles but not
which one). A cell's floor is the mean of its samples'.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from coca_eval.backends.stopping import StopRule


def grade(response: str, answer: str, prefix: str) -> float:
    """The card's score of ``response`` against ``answer`` (which starts with ``prefix``)."""
    if not response.startswith(prefix):
        return 0.0
    return float(SequenceMatcher(None, response.removeprefix(prefix), answer.removeprefix(prefix)).ratio())


def chance_floor(answer: str, prefix: str, needles: Sequence[str]) -> float:
    """The expected score of the prefix followed by one of ``needles`` (the answers of the identical
    requests, the right one among them) chosen uniformly."""
    if not needles:
        return 0.0
    return sum(grade(prefix + text, answer, prefix) for text in needles) / len(needles)


def score_answer(task, output: str, answers: Sequence[str], record: dict | None = None) -> dict:
    """One sample's record: ``score`` (the card's ratio, or MRCR v2's metric for DeepMind's rows,
    whose samples record ``grading``) and whether the reply opened with the random string.
    ``answers`` holds the answer (random string included); ``record`` the sample's ``prefix``."""
    record = record or {}
    prefix = record.get("prefix", "")
    if record.get("grading") == "mrcr_v2":
        from coca_eval.mrcr.deepmind import v2_score

        return {"score": v2_score(output, answers[0]), "prefixed": output.startswith(prefix)}
    return {"score": grade(output, answers[0], prefix), "prefixed": output.startswith(prefix)}


def stop_rule(budget: int) -> StopRule:
    """EOS or the answer budget: the whole reply is graded, so nothing decides it earlier."""
    return StopRule(budget)
