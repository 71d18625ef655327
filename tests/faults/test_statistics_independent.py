"""Tests that can catch what they claim: each statistic of the reports and the gate against an
independent computation, at sizes where a planted one-line bug moves the number well outside the
agreement allowed (each docstring says by how much). The planted bugs: a 97.5 % document bootstrap
instead of 95 %; the paired PPL ratio's quantiles at alpha instead of alpha/2; the random sign-flip
branch (more than 16 documents) with its first sign forced or its +1 dropped; the bootstrap p-value
without its +1; Newcombe's interval without its 0 <= AD - BC <= n/2 branch."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from coca_eval.gate.stats import paired_difference_interval, paired_ppl_ratio, sign_flip_p
from coca_eval.intervals import ppl_interval


def _brute_force_ppl_bootstrap(nll: np.ndarray, tokens: np.ndarray, level: float, n_boot: int, seed: int):
    """An independent percentile bootstrap: index resampling (not multinomial counts), its own seed."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(nll), size=(n_boot, len(nll)))
    draws = np.exp(nll[index].sum(axis=1) / tokens[index].sum(axis=1))
    tail = (1.0 - level) / 2.0
    return np.quantile(draws, [tail, 1.0 - tail]), draws.std()


def test_ppl_interval_matches_an_independent_bootstrap_at_its_level():
    """200 documents (not two, where any percentile is an extreme draw): both ends agree with a
    brute-force bootstrap within 0.12 bootstrap standard errors. Over 30 seeds of ``ppl_interval`` the
    largest gap was 0.053; a 97.5 % interval instead of 95 % moves the ends by 0.26 and 0.32."""
    rng = np.random.default_rng(1)
    tokens = rng.integers(200, 4000, 200).astype(np.float64)
    nll = tokens * rng.normal(2.8, 0.4, 200)
    (low, high), spread = _brute_force_ppl_bootstrap(nll, tokens, 0.95, 20000, 12345)
    got_low, got_high = ppl_interval(nll, tokens, n_boot=20000, seed=0)
    assert abs(got_low - low) < 0.12 * spread
    assert abs(got_high - high) < 0.12 * spread


def test_ppl_ratio_interval_matches_an_independent_bootstrap_at_alpha_over_two():
    """A ratio that varies across 200 documents: the two-sided ``1 - alpha`` interval matches a
    brute-force paired bootstrap (index resampling, its own seed) within 0.15 bootstrap standard errors.
    Over 30 seeds the largest gap was 0.061; quantiles at ``alpha`` instead of ``alpha / 2`` move both
    ends by 0.32."""
    rng = np.random.default_rng(2)
    tokens = rng.integers(200, 4000, 200).astype(np.float64)
    base = tokens * rng.normal(2.8, 0.4, 200)
    cand = base + tokens * rng.normal(0.02, 0.05, 200)
    index = np.random.default_rng(54321).integers(0, 200, size=(20000, 200))
    draws = np.expm1((cand - base)[index].sum(axis=1) / tokens[index].sum(axis=1))
    low, high = np.quantile(draws, [0.025, 0.975])
    result = paired_ppl_ratio(base, cand, tokens, 0.05, 20000, 0)
    assert abs(result.low - low) < 0.15 * draws.std()
    assert abs(result.high - high) < 0.15 * draws.std()


def _exact_sign_flip_p(diff: np.ndarray) -> float:
    """Every one of the ``2**n`` sign patterns, enumerated independently of ``sign_flip_p``."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(diff))))
    return float(np.mean(signs @ diff >= diff.sum() - 1e-9 * np.abs(diff).sum()))


def test_random_sign_flips_match_exact_enumeration_on_17_documents():
    """Beyond 16 documents the patterns are drawn at random; 20000 of them must estimate the exact p
    (0.286 here) within 0.02. Over 20 seeds the largest gap was 0.0098 (3 Monte-Carlo standard errors).
    Forcing the first sign (a dominant first document never flips) gives 0.565."""
    diff = np.concatenate([[6.0], np.random.default_rng(17).normal(0.3, 1.0, 16)])
    assert sign_flip_p(diff, 20000, 0) == pytest.approx(_exact_sign_flip_p(diff), abs=0.02)


def test_random_sign_flip_p_counts_the_observed_pattern():
    """A Monte-Carlo p-value is ``(1 + #) / (B + 1)``: it can never be below ``1 / (B + 1)``, however
    extreme the data (here 17 positive differences, exact p 2**-17; none of the 1000 draws is that
    extreme with this seed). Without the ``+ 1`` it reads 0."""
    assert sign_flip_p(np.ones(17), 1000, 0) == pytest.approx(1 / 1001)
    assert sign_flip_p(np.linspace(0.1, 2.0, 18), 1000, 3) >= 1 / 1001


def test_bootstrap_p_value_counts_the_observed_sample():
    """16 documents, every one worse for the candidate: no resample can show "no rise", so the bootstrap
    p is ``(1 + 0) / (B + 1)``, above the exact sign-flip p of 2**-16 and therefore the reported p.
    Without the ``+ 1`` the report would read 2**-16."""
    tokens = np.full(16, 1000.0)
    base = tokens * 2.5
    result = paired_ppl_ratio(base, base + tokens * np.linspace(0.01, 0.05, 16), tokens, 0.05, 200, 0)
    assert result.p_value == pytest.approx(1 / 201)


def _wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = successes / n
    centre, spread = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n), (centre + spread) / (1 + z * z / n)


def _newcombe_method_10(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Newcombe (1998) method 10, written from the paper's formula: Wilson limits for both marginal
    proportions combined with the correlation phi, which for ``AD > BC`` is ``max(AD - BC - n/2, 0)``
    over ``sqrt(efgh)``."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = _wilson(a + b, n), _wilson(a + c, n)
    cross = a * d - b * c
    numerator = max(cross - n / 2, 0.0) if cross > 0 else cross
    phi = numerator / math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return low, high


@pytest.mark.parametrize(
    "table",
    [(6, 3, 3, 2), (5, 3, 3, 2), (4, 2, 2, 2), (5, 3, 1, 2), (40, 6, 9, 45), (3, 40, 7, 50)],
    ids=[
        "cross-3-of-half-n-7",
        "cross-1-of-6.5",
        "cross-4-of-5-above-a-quarter-n",
        "cross-7-above-5.5",
        "cross-large",
        "cross-negative",
    ],
)
def test_paired_interval_matches_newcombe_method_10(table):
    """Tables whose ``AD - BC`` lies in ``[0, n/2]`` (where the continuity correction zeroes phi), above
    it and below zero, against an independent implementation of the formula."""
    assert paired_difference_interval(*table) == pytest.approx(_newcombe_method_10(*table), abs=1e-12)
