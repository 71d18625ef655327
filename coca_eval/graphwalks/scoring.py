"""GraphWalks' grading as the dataset card's own code grades (its README's ``get_list`` and F1, at the
revision named in docs/graphwalks.md): only the response's last line is read, and it must hold
``Final Answer:``, else the sample scores 0; the list is the greedy ``[...]`` span on that line,
split on commas, each item stripped, empty items dropped; duplicates count once (sets); an empty
answer to an empty gold set is right (F1 1), and an answer sharing no node with a non-empty gold set
scores 0. One departure: trailing whitespace is dropped before the last line is taken (the card
takes the text after the last newline as it is, so a reply ending ``]\n``, one token in many
tokenizers, would score 0 there for its last newline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.backends.stopping import StopRule

MARK = "Final Answer:"
LIST = re.compile(r"\[.*\]")  # the card's: the greedy bracketed span anywhere on the marked line


def answer_list(response: str) -> list[str] | None:
    """The names on the response's last line's ``Final Answer: [...]``; None when there is none."""
    line = response.rstrip().split("\n")[-1]
    if MARK not in line:
        return None
    found = LIST.search(line)
    if found is None:
        return None
    return [item.strip() for item in found[0].strip("[]").split(",") if item.strip()]


def set_scores(predicted: set[str] | None, truth: set[str]) -> tuple[float, float, float]:
    """``(precision, recall, F1)`` of an answer set against the gold set (None: no answer line)."""
    if predicted is None:
        return 0.0, 0.0, 0.0
    if not predicted and not truth:
        return 1.0, 1.0, 1.0
    overlap = len(predicted & truth)
    recall = overlap / len(truth) if truth else 0.0
    precision = overlap / len(predicted) if predicted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score_answer(task, output: str, answers: Sequence[str], record: dict | None = None) -> dict:
    """One sample's record: ``score`` (its F1), precision, recall, and the names the answer gave."""
    names = answer_list(output)
    predicted = None if names is None else set(names)
    precision, recall, f1 = set_scores(predicted, set(answers))
    return {
        "score": f1,
        "precision": precision,
        "recall": recall,
        "answered": names is not None,
        "predicted": sorted(predicted or ()),
    }


def answer_line_done(text: str) -> bool:
    """Whether the output's last line already holds a whole ``Final Answer: [...]``: what follows it
    would make it no longer the last line the grading reads, so decoding stops there."""
    line = text.rstrip().split("\n")[-1]
    return MARK in line and LIST.search(line) is not None


def stop_rule(budget: int) -> StopRule:
    return StopRule(budget, answer_line_done)
