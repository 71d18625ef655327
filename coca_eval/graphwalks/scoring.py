"""GraphWalks' grading: the node list of the response's ``Final Answer: [...]`` line, then set
precision, recall and F1 against the gold nodes; the sample's score is its F1.

As the dataset card grades (its README, see docs/graphwalks.md): only the response's last line is
read, and it must hold ``Final Answer:``, else the sample scores 0; the bracketed list is split on
commas, each item stripped, empty items dropped; duplicates count once (sets); an empty answer to an
empty gold set is right (F1 1). Where the card's snippet reads otherwise this reads as the card
describes: the list is what lies between the brackets (the snippet's ``strip("[]")`` on the whole
match leaves ``Final Answer: [`` glued to the first name), and an answer that shares no node with a
non-empty gold set scores 0 (the snippet's fallback gives any F1 it cannot divide 1). Trailing
whitespace is dropped before the last line is taken: a tokenizer that ends the answer with a ``]\\n``
token would otherwise leave an empty last line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.backends.stopping import StopRule

MARK = "Final Answer:"
LIST = re.compile(r"Final Answer: ?\[(.*)\]")


def answer_list(response: str) -> list[str] | None:
    """The names on the response's last line's ``Final Answer: [...]``; None when there is none."""
    line = response.rstrip().split("\n")[-1]
    if MARK not in line:
        return None
    found = LIST.search(line)
    if found is None:
        return None
    return [item.strip() for item in found[1].split(",") if item.strip()]


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
    return LIST.search(text.rstrip().split("\n")[-1]) is not None


def stop_rule(budget: int) -> StopRule:
    return StopRule(budget, answer_line_done)
