"""The uncertainty of one run's cell, shared by the reports and the gate.

Passkey accuracy gets a Wilson interval; perplexity, a micro-average over documents, gets a percentile
bootstrap that resamples documents (tokens within a book are strongly correlated, documents are the
independent units). The gate's paired comparisons (``coca_eval.gate.stats``) build on both, so they
live here, in a task-neutral module, rather than in a task or in the gate: a report reads them without
importing the gate, and the gate without importing a task. scipy is imported when an interval is
asked for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion. Unlike the normal approximation it stays
    inside [0, 1] and does not shrink to a point at 0 or n successes, where passkey accuracies often sit.

    Newcombe's (1998) form, with the ends at 0 and n successes exactly 0 and 1: the same bits as
    scipy.stats' ``binomtest(...).proportion_ci(method="wilson")`` (tests/test_intervals.py) without
    importing scipy.stats (a second of every run's start) for it."""
    from scipy.special import ndtri

    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes of {trials} trials")
    share = successes / trials
    z = ndtri(0.5 + 0.5 * confidence)
    denominator = 2 * (trials + z**2)
    centre = (2 * trials * share + z**2) / denominator
    half_width = z / denominator * np.sqrt(4 * trials * share * (1 - share) + z**2)
    low = 0.0 if successes == 0 else centre - half_width
    high = 1.0 if successes == trials else centre + half_width
    return float(low), float(high)


def wilson_mean_bounds(mean: float, trials: float, z: float) -> tuple[float, float]:
    """Wilson's score bounds at normal quantile ``z`` for a mean ``mean`` in [0, 1] of ``trials``
    scores in [0, 1]. For right/wrong scores this is :func:`wilson_interval`; partial credits (RULER's
    fraction of needles found) have variance at most ``mean (1 - mean)`` too, so the same bounds hold
    for them, and ``trials`` may be an effective (fractional) count."""
    centre = mean + z * z / (2 * trials)
    spread = z * math.sqrt(max(mean * (1 - mean), 0.0) / trials + z * z / (4 * trials * trials))
    scale = 1 + z * z / trials
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


def clustered_trials(scores: Sequence[float], clusters: Sequence) -> float:
    """The effective number of scores behind the mean of ``scores`` (each in [0, 1]) when the scores of
    one cluster (``clusters[i]`` names score ``i``'s) are not independent: the count at which
    :func:`wilson_mean_bounds`' variance ``mean (1 - mean) / trials`` equals the cluster-robust variance
    of the mean (the sandwich estimator without small-sample factor),
    ``sum_g (S_g - m_g mean)^2 / n^2`` over clusters ``g`` of ``m_g`` scores summing to ``S_g``; that
    is n over the design effect. One score per cluster gives n (the variance is then at most the
    independent one); clusters of equal size whose right/wrong scores agree within each give the number
    of clusters.

    As for proportions from clustered surveys (Korn and Graubard, 1998), the design effect is taken as 1
    where it cannot be estimated (a mean of 0 or 1: no spread) and where it is below 1 (clusters less
    alike than independent scores): the count is never above n, so clusters never make the interval
    narrower than independent scores would.
    """
    n = len(scores)
    if n == 0:
        raise ValueError("no scores")
    if len(clusters) != n:
        raise ValueError("one cluster per score")
    mean = sum(scores) / n
    spread = mean * (1 - mean)
    sums: dict = {}
    for score, cluster in zip(scores, clusters, strict=True):
        total, size = sums.get(cluster, (0.0, 0))
        sums[cluster] = (total + score, size + 1)
    robust = sum((total - size * mean) ** 2 for total, size in sums.values())
    if len(sums) == n or spread <= 0 or robust <= 0:
        return float(n)
    return min(float(n), spread * n * n / robust)


def resample_counts(n_items: int, n_boot: int, seed: int) -> np.ndarray:
    """``[n_boot, n_items]`` multiplicities of a with-replacement resample: one row per bootstrap draw.

    Counts instead of index lists let every statistic that is a ratio of sums be one matrix product.
    """
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_boot).astype(np.float64)


def ppl_interval(
    nll_sums: Sequence[float], tokens: Sequence[int], level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of one run's micro-averaged PPL, resampling documents.

    A document may hold no scored token (LongPPL's documents without a key token): it is still one of
    the units drawn, but a draw of such documents only has no perplexity and is left out, so the
    interval is the one of the draws that define the statistic (ppl's documents always do).
    """
    nll, tok = np.asarray(nll_sums, dtype=np.float64), np.asarray(tokens, dtype=np.float64)
    counts = resample_counts(len(nll), n_boot, seed)
    drawn_tokens = counts @ tok
    defined = drawn_tokens > 0
    if not defined.any():
        raise ValueError("no document holds a scored token: the perplexity is undefined")
    draws = np.exp((counts[defined] @ nll) / drawn_tokens[defined])
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return float(low), float(high)
