"""One run's cell intervals: Wilson (published values, edges) and the document bootstrap, and that
reports and the gate use these very functions."""

import math

import numpy as np
import pytest

from coca_eval.intervals import ppl_interval, wilson_interval


def test_wilson_interval_known_values():
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-3) and high == pytest.approx(1.0)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)


def test_wilson_interval_keeps_a_width_at_the_edges_and_widens_with_confidence():
    low, high = wilson_interval(0, 100)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.0370, abs=1e-3)
    narrow = wilson_interval(30, 100, confidence=0.90)
    wide = wilson_interval(30, 100, confidence=0.99)
    assert wide[0] < narrow[0] < 0.30 < narrow[1] < wide[1]


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_wilson_interval_is_scipys_to_the_bit(confidence):
    """The same floats as scipy.stats' binomtest Wilson interval, which the module no longer imports."""
    from scipy.stats import binomtest

    for trials in (1, 2, 3, 7, 10, 20, 25, 64, 100, 500, 1000):
        for successes in sorted({0, 1, trials // 3, trials // 2, trials - 1, trials}):
            ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
            assert wilson_interval(successes, trials, confidence) == (ci.low, ci.high), (successes, trials)


def test_wilson_interval_refuses_counts_that_are_no_proportion():
    for successes, trials in ((1, 0), (-1, 5), (6, 5)):
        with pytest.raises(ValueError):
            wilson_interval(successes, trials)


def test_the_effective_lengths_normal_quantile_is_scipy_stats_norm():
    from scipy.special import ndtri
    from scipy.stats import norm

    for p in (0.8, 0.9, 0.95, 0.975, 0.99, 0.995):
        assert ndtri(p) == norm.ppf(p), p


def test_passkey_reports_and_the_gate_share_one_interval():
    from coca_eval.gate import stats
    from coca_eval.passkey import answer, report

    assert answer.wilson_interval is report.wilson_interval is stats.wilson_interval is wilson_interval


def test_ppl_interval_brackets_the_run_ppl():
    nll, tokens = np.array([3000.0, 2600.0, 3300.0, 2900.0]), np.array([1000, 1000, 1100, 1000])
    low, high = ppl_interval(nll, tokens)
    point = math.exp(nll.sum() / tokens.sum())
    assert math.exp(2.6) <= low < point < high <= math.exp(3.0)


def test_the_perplexity_report_uses_this_bootstrap():
    from coca_eval.ppl import report

    assert report.ppl_interval is ppl_interval


def test_documents_without_tokens_are_drawn_but_draws_of_only_them_are_left_out():
    """LongPPL's documents may hold no key token; a draw of only those has no perplexity. The interval
    of the others' draws stays inside the range of the documents' own perplexities, never NaN."""
    nll, tokens = np.array([0.0, 2900.0, 0.0, 3410.0]), np.array([0, 1000, 0, 1100])
    low, high = ppl_interval(nll, tokens, n_boot=500)
    assert math.exp(2.9) - 1e-9 <= low < high <= math.exp(3.1) + 1e-9
    with pytest.raises(ValueError, match="undefined"):
        ppl_interval([0.0, 0.0], [0, 0])
