"""The statistics behind the gate: paired comparisons of two runs on the same documents or samples
(one run's own intervals: :mod:`coca_eval.intervals`).

Perplexity is a token micro-average, so a run's PPL is ``exp(sum NLL / sum tokens)`` over documents.
Documents, not tokens, are the independent units (tokens within a book are strongly correlated), so
uncertainty comes from resampling documents. Comparing two runs on the same documents, the natural
effect is the PPL ratio ``exp((sum NLL_c - sum NLL_b) / sum tokens)``: pairing removes the (large)
between-document variance and leaves only how the two models differ on each document.

Passkey samples are paired by construction (same key at the same depth), so the exact McNemar test on
the discordant pairs is the right test for an accuracy drop, and Newcombe's paired interval shows its size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from coca_eval.intervals import resample_counts, wilson_interval


@dataclass(frozen=True)
class PairedResult:
    """One paired comparison: the effect (positive = candidate worse), its interval and one-sided p."""

    effect: float
    low: float
    high: float
    p_value: float


def sign_flip_p(diff: np.ndarray, n_draws: int, seed: int) -> float:
    """One-sided p of ``sum(diff) > 0`` under "the two runs are exchangeable on every document".

    If baseline and candidate are the same model up to independent noise, each document's difference
    is as likely negative as positive, so flipping signs gives the exact null distribution: every sign
    pattern for up to 16 documents, ``n_draws`` random patterns beyond.
    """
    n = len(diff)
    if n <= 16:
        signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        stats = signs @ diff
        return float(np.count_nonzero(stats >= diff.sum() - _slack(diff)) / len(stats))
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(n_draws, n))
    return float((1 + np.count_nonzero(signs @ diff >= diff.sum() - _slack(diff))) / (n_draws + 1))


def _slack(diff: np.ndarray) -> float:
    """Float round-off allowance so a tie with the observed sum counts as a tie."""
    return 1e-9 * float(np.abs(diff).sum())


def paired_ppl_ratio(
    base_nll: Sequence[float],
    cand_nll: Sequence[float],
    tokens: Sequence[int],
    alpha: float,
    n_boot: int,
    seed: int,
) -> PairedResult:
    """PPL rise ``PPL_c / PPL_b - 1`` with a paired document bootstrap; H1: the candidate is worse.

    The bootstrap p-value is the resampled mass at or below "no rise" (``(1 + #) / (B + 1)``), i.e. it
    rejects exactly when the one-sided ``1 - alpha`` lower bound is above zero. The percentile bootstrap
    is optimistic with few documents (about 8 % false alarms at 8 documents, 16 % at 4, in the
    simulation of ``tests/test_gate_simulation.py``), so the reported p is the larger of it and the
    exact sign-flip p-value, which keeps the level at any document count; with many documents the two
    agree.

    A document may hold no scored token (LongPPL's documents without a key token; both runs then have
    none there, as they score the same key tokens). A draw of only such documents has no ratio: it is
    left out of the interval and counted as "no rise" in the p-value, which can only make it larger.
    """
    diff = np.asarray(cand_nll, dtype=np.float64) - np.asarray(base_nll, dtype=np.float64)
    tok = np.asarray(tokens, dtype=np.float64)
    log_ratio = diff.sum() / tok.sum()
    counts = resample_counts(len(diff), n_boot, seed)
    drawn_tokens = counts @ tok
    defined = drawn_tokens > 0
    draws = (counts[defined] @ diff) / drawn_tokens[defined]
    p_boot = bootstrap_p(draws, int(np.count_nonzero(~defined)), n_boot)
    low, high = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0])
    p_value = max(float(p_boot), sign_flip_p(diff, n_boot, seed + 1))
    return PairedResult(float(np.expm1(log_ratio)), float(np.expm1(low)), float(np.expm1(high)), p_value)


def bootstrap_p(draws: np.ndarray, undefined: int, n_boot: int) -> float:
    """The bootstrap p-value of "no rise": the resampled mass at or below zero (a draw of exactly no
    change is no rise, so ties count), with the ``undefined`` draws as no rise, ``(1 + #) / (B + 1)``."""
    return (1.0 + np.count_nonzero(draws <= 0.0) + undefined) / (n_boot + 1.0)


def paired_mean_drop(
    base: Sequence[float], cand: Sequence[float], alpha: float, n_boot: int, seed: int
) -> PairedResult:
    """Mean per-sample score drop ``mean(base - cand)`` on paired samples whose scores are not all 0/1
    (an F1, a partial-credit score), with a paired sample bootstrap interval. As for perplexity, the
    reported p is the larger of the bootstrap's and the exact sign-flip test's, which keeps the level
    with few samples."""
    diff = np.asarray(base, dtype=np.float64) - np.asarray(cand, dtype=np.float64)
    draws = resample_counts(len(diff), n_boot, seed) @ diff / len(diff)
    low, high = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0])
    p_value = max(bootstrap_p(draws, 0, n_boot), sign_flip_p(diff, n_boot, seed + 1))
    return PairedResult(float(diff.mean()), float(low), float(high), p_value)


def mcnemar_drop(base_correct: Sequence[bool], cand_correct: Sequence[bool]) -> PairedResult:
    """Accuracy drop ``acc_b - acc_c`` on paired samples, exact one-sided McNemar p-value.

    Only discordant pairs carry information: under "no change" the samples the candidate newly fails
    are Binomial(discordant, 1/2). The interval is Newcombe's square-and-add one for paired samples
    (:func:`paired_difference_interval`); the decision uses the exact p-value.
    """
    base, cand = np.asarray(base_correct, dtype=bool), np.asarray(cand_correct, dtype=bool)
    both, losses = int(np.sum(base & cand)), int(np.sum(base & ~cand))
    wins, neither = int(np.sum(~base & cand)), int(np.sum(~base & ~cand))
    drop = (losses - wins) / len(base)
    discordant = losses + wins
    p_value = binomtest(losses, discordant, 0.5, alternative="greater").pvalue if discordant else 1.0
    low, high = paired_difference_interval(both, losses, wins, neither)
    return PairedResult(drop, low, high, float(p_value))


def paired_difference_interval(
    both: int, first_only: int, second_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Interval for ``p_first - p_second`` from one paired 2x2 table (Newcombe 1998, the square-and-add
    method on Wilson intervals, with his continuity-corrected correlation).

    Why not the normal approximation: with accuracies near 0 or 1, as passkey's are, it leaves [-1, 1]
    (0.98 against 0.00 reads [-1.01, -0.95] as a change) and collapses to a zero-width interval when no
    pair is discordant, claiming certainty that 100 samples do not give. This one stays inside [-1, 1]
    and never shrinks to a point.
    """
    n = both + first_only + second_only + neither
    first, second = both + first_only, both + second_only
    p1, p2 = first / n, second / n
    low1, high1 = wilson_interval(first, n, confidence)
    low2, high2 = wilson_interval(second, n, confidence)
    phi = _paired_correlation(both, first_only, second_only, neither)
    below = (p1 - low1) ** 2 + (high2 - p2) ** 2 - 2 * phi * (p1 - low1) * (high2 - p2)
    above = (high1 - p1) ** 2 + (p2 - low2) ** 2 - 2 * phi * (high1 - p1) * (p2 - low2)
    return p1 - p2 - float(np.sqrt(max(below, 0.0))), p1 - p2 + float(np.sqrt(max(above, 0.0)))


def _paired_correlation(both: int, first_only: int, second_only: int, neither: int) -> float:
    """The correlation of the two paired outcomes, shrunk towards 0 by half a sample when positive;
    0 where a margin is empty (the two proportions cannot then co-vary)."""
    margins = (both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    if margins == 0:
        return 0.0
    n = both + first_only + second_only + neither
    cross = both * neither - first_only * second_only
    if 0 <= cross <= n / 2:
        return 0.0
    return (cross - n / 2 if cross > 0 else cross) / float(np.sqrt(margins))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values: the gate tests every length at once and must still fail a
    same-model pair at most ``alpha`` of the time overall, not ``alpha`` per cell."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
