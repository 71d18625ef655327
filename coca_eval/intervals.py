"""Confidence intervals shared by tasks, reports and the gate.

A task-neutral home, so that the passkey report and the gate's paired interval read the very same
Wilson interval without one package importing the other. scipy is imported when an interval is asked
for, so importing this module stays as cheap as importing ``coca_eval``.
"""

from __future__ import annotations


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion. Unlike the normal approximation it stays
    inside [0, 1] and does not shrink to a point at 0 or n successes, where passkey accuracies often sit."""
    from scipy.stats import binomtest

    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)
