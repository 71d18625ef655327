"""The passkey answer: decoding stops once the output's first integer is complete, and that integer
is what is scored (the landmark rule: it must equal the key; a substring match is kept beside it).

A non-digit after the first integer (or EOS, or ``max_new_tokens``) ends decoding: the tokens after it
cannot change the score. The task hands this rule to the backend's ``generate_greedy``
(:class:`~coca_eval.backends.stopping.StopRule`), which stops on it or cuts at it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.backends.stopping import StopRule
from coca_eval.intervals import wilson_interval

_FIRST_INTEGER = re.compile(r"\d+")


def first_integer(text: str) -> int | None:
    match = _FIRST_INTEGER.search(text)
    return int(match.group()) if match else None


def answer_decided(text: str) -> bool:
    """True once the first integer in ``text`` is followed by something that is not a digit."""
    match = _FIRST_INTEGER.search(text)
    return match is not None and match.end() < len(text)


def passkey_stop(max_new_tokens: int) -> StopRule:
    """EOS, the token budget, or a decided answer."""
    return StopRule(max_new_tokens, answer_decided)


def score_output(text: str, key: int) -> dict[str, bool]:
    return {"correct": first_integer(text) == key, "substring": str(key) in text}


def accuracy_detail(records: Sequence[dict]) -> dict:
    """Accuracy, its Wilson 95 % interval and the substring-match accuracy over sample records, in
    points (0-100, the unit of every family's scores)."""
    n = len(records)
    correct = sum(r["correct"] for r in records)
    low, high = wilson_interval(correct, n)
    return {
        "accuracy": 100 * correct / n,
        "wilson95": [100 * low, 100 * high],
        "substring_accuracy": 100 * sum(r["substring"] for r in records) / n,
    }


POINTS_KEYS = ("accuracy", "wilson95", "substring_accuracy")  # what accuracy_detail gives, in points


def detail_in_points(detail: dict) -> dict:
    """An old cell's detail (accuracies 0-1) as :func:`accuracy_detail` now writes it; the samples and
    a stopping rule's own record (``sequential``, fractions as the rule works) are kept as they are."""
    from coca_eval.units import scaled

    return {key: scaled(value) if key in POINTS_KEYS else value for key, value in detail.items()}
