"""The confidence sequence and its stopping rules, and the acceptance simulation: under optional stopping
the confidence sequence keeps its coverage and the plain Wilson interval does not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.intervals import wilson_interval
from coca_eval.sequential import (
    StoppingRule,
    candidate_means,
    confidence_sequence,
    intervals_from_capital,
    log_capital,
    stop_point,
    visiting_order,
)

RUNS = 2000  # sequential runs per simulated setting
GRID = 51  # candidate means of the simulation (the live grid is finer; coarser only widens intervals)


def _stopped(intervals: np.ndarray, rule: StoppingRule) -> np.ndarray:
    """``[runs, 2]``: each run's interval at the first look where ``rule`` decided, else at the last."""
    decided = rule.decided(intervals[..., 0], intervals[..., 1])
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), intervals.shape[1] - 1)
    return intervals[np.arange(len(intervals)), first]


def _sequence_at_looks(scores: np.ndarray, rule: StoppingRule, chunk: int = 250) -> np.ndarray:
    """``[runs, looks, 2]`` confidence-sequence intervals at the rule's looks, in chunks of runs."""
    means, looks = candidate_means(GRID), np.array(rule.looks()) - 1
    parts = []
    for start in range(0, len(scores), chunk):
        capital = log_capital(scores[start : start + chunk], means, rule.confidence)[:, looks]
        parts.append(intervals_from_capital(capital, means, rule.confidence))
    return np.concatenate(parts)


def _wilson_at_looks(outcomes: np.ndarray, rule: StoppingRule) -> np.ndarray:
    """``[runs, looks, 2]`` Wilson intervals (the project's own function, once per distinct count)."""
    looks = np.array(rule.looks())
    successes = np.cumsum(outcomes, axis=1)[:, looks - 1].astype(int)
    trials = np.broadcast_to(looks, successes.shape)
    pairs, inverse = np.unique(np.stack([successes.ravel(), trials.ravel()], 1), axis=0, return_inverse=True)
    table = np.array([wilson_interval(int(k), int(n)) for k, n in pairs])
    return table[inverse.ravel()].reshape(successes.shape + (2,))


def _coverage(intervals: np.ndarray, mean: float) -> float:
    return float(((intervals[:, 0] <= mean) & (mean <= intervals[:, 1])).mean())


def test_threshold_rule_keeps_coverage_where_wilson_loses_it():
    """Accuracy exactly at the threshold, 20 looks: a rule acting on Wilson's interval stops on a false
    'above'/'below' in about a quarter of the runs (coverage 0.77 with this seed); the confidence
    sequence keeps 0.98."""
    rule = StoppingRule(max_samples=200, threshold=0.5)
    outcomes = (np.random.default_rng(20261126).random((RUNS, rule.max_samples)) < 0.5).astype(float)
    sequence = _coverage(_stopped(_sequence_at_looks(outcomes, rule), rule), 0.5)
    wilson = _coverage(_stopped(_wilson_at_looks(outcomes, rule), rule), 0.5)
    assert sequence >= 0.95
    assert wilson < 0.85  # nominally 0.95: optional stopping costs it more than ten points


def test_width_rule_keeps_coverage_on_fractional_scores():
    """RULER-style scores (the fraction of 4 needles found) under the target-width rule."""
    mean, rule = 0.45, StoppingRule(max_samples=200, target_width=0.2)
    scores = np.random.default_rng(45).binomial(4, mean, size=(RUNS, rule.max_samples)) / 4.0
    stopped = _stopped(_sequence_at_looks(scores, rule), rule)
    assert _coverage(stopped, mean) >= 0.95
    decided = rule.decided(stopped[:, 0], stopped[:, 1])
    assert decided.mean() > 0.5  # the rule does stop early in these settings, so coverage was tested


def test_sequence_contains_the_running_mean_and_shrinks():
    rng = np.random.default_rng(1)
    scores = (rng.random(400) < 0.8).astype(float)
    intervals = confidence_sequence(scores)
    running = np.cumsum(scores) / np.arange(1, 401)
    assert np.all((intervals[:, 0] <= running) & (running <= intervals[:, 1]))
    widths = intervals[:, 1] - intervals[:, 0]
    assert np.all(np.diff(widths) <= 1e-12)  # the running intersection never widens
    assert widths[-1] < 0.15 < widths[19]


def test_sequence_is_wider_than_wilson_at_a_fixed_count():
    """The price of validity at every count: at any one count it is wider than the fixed-n interval."""
    scores = np.array(([1.0] * 9 + [0.0]) * 5)
    low, high = confidence_sequence(scores)[-1]
    w_low, w_high = wilson_interval(45, 50)
    assert low < w_low and high - low > w_high - w_low


def test_scores_outside_unit_interval_refused():
    with pytest.raises(ValueError):
        confidence_sequence([0.5, 1.5])


def test_stop_point_threshold_and_replay_prefix():
    rule = StoppingRule(max_samples=100, threshold=0.5)
    outcome = stop_point([1.0] * 100, rule)
    assert outcome.decision == "above 0.5" and outcome.spent % rule.round_size == 0
    assert outcome.spent < 30 and outcome.interval[0] > 0.5 and outcome.mean == 1.0
    assert stop_point([1.0] * (outcome.spent - 1), rule) is None  # wants more than it was given
    assert stop_point([1.0] * outcome.spent, rule) == outcome


def test_stop_point_undecided_at_max():
    rule = StoppingRule(max_samples=25, threshold=0.5)
    outcome = stop_point([1.0, 0.0] * 13, rule)
    assert outcome.spent == 25 and outcome.decision == "undecided at 25"
    assert rule.looks() == [10, 20, 25]


def test_width_rule_verdict():
    rule = StoppingRule(max_samples=200, target_width=0.2)
    outcome = stop_point([0.0] * 200, rule)
    assert outcome.decision == "narrower than 0.2"
    assert outcome.interval[1] - outcome.interval[0] < 0.2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_samples": None, "threshold": 0.5}, "--max-samples"),
        ({"max_samples": 0, "threshold": 0.5}, "--max-samples"),
        ({"max_samples": 10}, "exactly one stopping rule"),
        ({"max_samples": 10, "threshold": 0.5, "target_width": 0.1}, "exactly one stopping rule"),
        ({"max_samples": 10, "target_width": 1.0}, "--target-width must lie in (0, 1)"),
        ({"max_samples": 10, "target_width": 0.0}, "--target-width must lie in (0, 1)"),
        ({"max_samples": 10, "threshold": 1.0}, "--threshold must lie in (0, 1)"),
    ],
)
def test_bad_rules_refused(kwargs, message):
    with pytest.raises(CocaEvalError, match=message.replace("(", r"\(").replace(")", r"\)")):
        StoppingRule(**kwargs)


def test_visiting_order_is_a_seeded_permutation():
    order = visiting_order("passkey", 0, 1024, 100)
    assert sorted(order) == list(range(100)) and order != list(range(100))
    assert order == visiting_order("passkey", 0, 1024, 100)
    assert order != visiting_order("passkey", 0, 2048, 100)
    # stratified depths: the first rounds reach every depth, not only the shallow ones
    assert np.ptp(order[:10]) > 50


def test_the_wealth_process_equals_a_hand_computed_one():
    """Scores 1, 0, 1 against candidate means 0.5 and 0.9, worked from the paper's formulas step by
    step (Waudby-Smith & Ramdas 2023, Thm 3): the predictable variance starts at 1/4 and averages the
    squared deviations from the running mean (itself started at 1/2, both over t + 1), the bet is
    sqrt(2 log(2 / alpha) / (var t log(1 + t))) truncated at 0.5 / m and 0.5 / (1 - m), the hedged
    capital is the larger of the two gamblers' halves, and its running maximum is kept."""
    from coca_eval.sequential import log_capital

    scores, alpha = [1.0, 0.0, 1.0], 0.05
    variances = [0.25, (0.25 + (1 - 0.75) ** 2) / 2, (0.25 + (1 - 0.75) ** 2 + (0 - 0.5) ** 2) / 3]
    bets = [
        math.sqrt(2 * math.log(2 / alpha) / (v * t * math.log(1 + t))) for t, v in enumerate(variances, 1)
    ]
    expected = []
    for m in (0.5, 0.9):
        up = down = 0.0
        best, column = -math.inf, []
        for x, lam in zip(scores, bets, strict=True):
            up += math.log(1 + min(lam, 0.5 / m) * (x - m))
            down += math.log(1 - min(lam, 0.5 / (1 - m)) * (x - m))
            best = max(best, max(up, down) + math.log(0.5))
            column.append(best)
        expected.append(column)
    got = log_capital(np.array(scores), np.array([0.5, 0.9]), 1 - alpha)
    assert np.allclose(got.T, np.array(expected), rtol=0, atol=1e-12)
    assert bets[1] == pytest.approx(4.6357, abs=1e-4) and got[1, 1] == pytest.approx(0.25699, abs=1e-5)


def test_the_interval_is_widened_by_one_grid_step_on_each_side():
    from coca_eval.sequential import intervals_from_capital

    means = np.linspace(0.0, 1.0, 11)
    capital = np.full(11, 10.0)
    capital[3:7] = 0.0  # means 0.3 .. 0.6 kept
    assert intervals_from_capital(capital, means, 0.95) == pytest.approx([0.2, 0.7])


def test_an_interval_touching_the_threshold_does_not_decide():
    """``above 0.5`` needs the whole interval above it: a low end exactly at 0.5 is undecided."""
    rule = StoppingRule(100, threshold=0.5)
    assert rule.verdict((0.5, 0.9)) is None and rule.verdict((0.1, 0.5)) is None
    assert rule.verdict((0.5001, 0.9)) == "above 0.5" and rule.verdict((0.1, 0.4999)) == "below 0.5"
