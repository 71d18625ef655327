"""The decay closed forms against direct evaluation of the papers' sums at chosen distances."""

import cmath
import math

import numpy as np
import pytest

from coca_eval.analyses import closed_forms as cf

D = 64
THETA = np.array([10000.0 ** (-2 * j / D) for j in range(D // 2)])
DISTANCES = np.array([0, 1, 3, 10, 100, 1000])


def test_roformer_bound_is_the_mean_of_partial_sum_moduli():
    for s, value in zip(DISTANCES, cf.relative_bound(THETA, DISTANCES), strict=True):
        partial = [sum(cmath.exp(1j * s * t) for t in THETA[:j]) for j in range(1, D // 2 + 1)]
        assert value == pytest.approx(sum(abs(p) for p in partial) / (D / 2), rel=1e-10)


def test_bound_at_distance_zero_is_its_arithmetic_series():
    assert cf.relative_bound(THETA, np.array([0]))[0] == pytest.approx((D / 2 + 1) / 2)


def test_coca_bound_uses_cosine_partial_sums_and_never_exceeds_roformer():
    coca = cf.coca_bound(THETA, DISTANCES)
    for s, value in zip(DISTANCES, coca, strict=True):
        partial = [sum(math.cos(s * t) for t in THETA[:j]) for j in range(1, D // 2 + 1)]
        assert value == pytest.approx(sum(abs(p) for p in partial) / (D / 2), rel=1e-10)
    assert np.all(coca <= cf.relative_bound(THETA, DISTANCES) + 1e-12)


def test_all_ones_is_the_normalised_dot_product_of_rotated_ones():
    for s, value in zip(DISTANCES, cf.all_ones(THETA, DISTANCES), strict=True):
        rotated = sum(2 * math.cos(s * t) for t in THETA)  # each plane: (1,1) . R(s theta) (1,1)
        assert value == pytest.approx(rotated / D, rel=1e-12)


def test_gaussian_curve_has_no_decay_in_expectation():
    curve = cf.gaussian(THETA, DISTANCES, samples=20000, seed=0)
    assert np.abs(curve).max() < 4 / math.sqrt(D * 20000) * 3  # within a few standard errors of 0
    assert cf.gaussian(THETA, DISTANCES, samples=1, seed=0)[0] != 0.0  # one draw does fluctuate


def test_random_positions_match_a_simulation():
    tokens, bound, r = 32, 128, np.array([1, 4, 16])
    rng = np.random.default_rng(0)
    draws = np.sort(
        np.stack([rng.choice(np.arange(1, bound + 1), tokens, replace=False) for _ in range(40000)]), axis=1
    )
    for distance, value in zip(r, cf.random_positions(THETA, r, tokens, bound), strict=True):
        gaps = draws[:, distance:] - draws[:, :-distance]  # (draws, tokens - r)
        simulated = cf.all_ones(THETA, gaps.ravel()).mean()
        assert value == pytest.approx(simulated, abs=0.01)


def test_spacing_law_is_a_distribution():
    law = cf.spacing_law(5, 40, 200)
    assert law.sum() == pytest.approx(1.0) and law[:5].sum() == 0.0


def test_distance_grid_starts_one_by_one_and_stays_below_the_length():
    grid = cf.distance_grid(4096)
    assert list(grid[:17]) == list(range(17)) and grid[-1] == 4095 and np.all(np.diff(grid) > 0)
