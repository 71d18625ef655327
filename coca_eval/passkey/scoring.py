"""Passkey scoring: the landmark rule (first integer equals the key), substring match, accuracy."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.intervals import wilson_interval
from coca_eval.passkey.generation import first_integer


def score_output(text: str, key: int) -> dict[str, bool]:
    return {"correct": first_integer(text) == key, "substring": str(key) in text}


def accuracy_detail(records: Sequence[dict]) -> dict:
    """Accuracy, its Wilson 95 % interval and the substring-match accuracy over sample records."""
    n = len(records)
    correct = sum(r["correct"] for r in records)
    low, high = wilson_interval(correct, n)
    return {
        "accuracy": correct / n,
        "wilson95": [low, high],
        "substring_accuracy": sum(r["substring"] for r in records) / n,
    }
