"""Passkey scoring: the landmark rule (first integer equals the key), substring match, Wilson interval."""

from __future__ import annotations

from collections.abc import Sequence

from scipy.stats import binomtest

from coca_eval.passkey.generation import first_integer


def score_output(text: str, key: int) -> dict[str, bool]:
    return {"correct": first_integer(text) == key, "substring": str(key) in text}


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


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
