"""The gate's building blocks against hand-computed values, and its handling of OOM / inf cells."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_gate_simulation import passkey_run, ppl_run

from coca_eval.gate import GateOptions, run_gate
from coca_eval.gate.stats import (
    holm_adjust,
    mcnemar_drop,
    paired_difference_interval,
    paired_mean_drop,
    paired_ppl_ratio,
    sign_flip_p,
)
from coca_eval.results import Cell


def test_holm_adjustment():
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_mcnemar_counts_only_discordant_pairs():
    base = np.ones(100, dtype=bool)
    cand = base.copy()
    cand[:5] = False
    result = mcnemar_drop(base, cand)
    assert result.effect == pytest.approx(0.05) and result.p_value == pytest.approx(2.0**-5)
    base2 = base.copy()
    base2[50:55] = False  # five samples only the candidate gets right: 5 losses, 5 wins
    balanced = mcnemar_drop(base2, cand)
    assert balanced.effect == pytest.approx(0.0) and balanced.p_value > 0.5
    assert mcnemar_drop(base, base).p_value == 1.0


def test_paired_interval_matches_the_published_worked_example():
    """Fagerland, Lydersen and Laake's paired 2x2 example (Cavo et al. 2012: 59, 6, 16, 80) reads
    -0.0621 (95 % CI -0.1186 to -0.0046) by Newcombe's square-and-add method."""
    low, high = paired_difference_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


def test_paired_interval_stays_inside_the_possible_range_and_never_shrinks_to_a_point():
    """Near 0 and 1 (passkey's usual accuracies) the interval neither leaves [-1, 1] nor collapses to
    a point when no pair is discordant; swapping the two sides mirrors it."""
    low, high = paired_difference_interval(0, 98, 0, 2)  # 0.98 against 0.00
    assert -1 <= low < 0.98 < high <= 1
    low, high = paired_difference_interval(0, 0, 0, 100)  # both 0 of 100
    assert low < 0 < high and high == pytest.approx(-low) and high > 0.03
    assert paired_difference_interval(3, 40, 7, 50) == pytest.approx(
        tuple(-x for x in reversed(paired_difference_interval(3, 7, 40, 50)))
    )
    result = mcnemar_drop(np.ones(100, dtype=bool), np.zeros(100, dtype=bool))
    assert -1 <= result.low < result.effect == 1.0 <= result.high <= 1


def test_paired_interval_covers_the_true_difference_about_95_percent_of_the_time():
    """2000 simulated paired tables of 100 samples with correlated outcomes (0.90 against 0.60)."""
    rng = np.random.default_rng(0)
    cells = np.array([0.55, 0.35, 0.05, 0.05])  # both, first only, second only, neither
    truth = (cells[0] + cells[1]) - (cells[0] + cells[2])
    tables = rng.multinomial(100, cells, size=2000)
    covered = [low <= truth <= high for low, high in (paired_difference_interval(*t) for t in tables)]
    assert 0.93 <= np.mean(covered) <= 0.975


def test_sign_flip_is_exact_for_few_documents():
    assert sign_flip_p(np.array([1.0, 1.0, 1.0]), 100, 0) == pytest.approx(1 / 8)
    assert sign_flip_p(np.array([1.0, -1.0]), 100, 0) == pytest.approx(3 / 4)
    assert sign_flip_p(np.zeros(5), 100, 0) == 1.0


def test_ppl_ratio_is_the_ratio_of_micro_averaged_perplexities():
    tokens = np.array([1000, 3000, 2000])
    base = np.array([3.0, 2.5, 2.8]) * tokens
    cand = base + math.log(1.1) * tokens
    result = paired_ppl_ratio(base, cand, tokens, 0.05, 500, 0)
    assert result.effect == pytest.approx(0.1) and result.low == pytest.approx(0.1)
    assert result.p_value == pytest.approx(1 / 8)  # three documents: the exact sign-flip floor
    same = paired_ppl_ratio(base, base, tokens, 0.05, 500, 0)
    assert same.effect == 0.0 and same.p_value == 1.0


def test_four_documents_can_never_be_significant_and_the_gate_says_so():
    tokens = np.full(4, 2000)
    nll = np.full((3, 4), 3.0)
    result = run_gate([(ppl_run(nll, tokens), ppl_run(nll + 0.2, tokens))], GateOptions(n_boot=500))
    assert not result.failed  # beyond tolerance but not significant: no regression shown, none ruled out
    assert all(v.verdict == "inconclusive" and "too few units" in v.reason for v in result.cells)
    assert result.notes and "with 4 documents" in result.notes[0]


def test_failed_cells():
    tokens, nll = np.full(20, 2000), np.full((3, 20), 3.0)
    base, cand = ppl_run(nll, tokens), ppl_run(nll, tokens)
    base.cells[0] = Cell(task="ppl", method="m", metric="ppl", length=512, dataset="pg19", status="oom")
    cand.cells[1] = Cell(task="ppl", method="m", metric="ppl", length=1024, dataset="pg19", status="inf")
    verdicts = run_gate([(base, cand)], GateOptions(n_boot=500)).cells
    assert [(v.verdict, v.reason) for v in verdicts] == [
        ("skipped", "baseline is OOM"),
        ("regression", "candidate is inf"),
        ("pass", "within tolerance"),
    ]


def test_passkey_improvement_passes():
    worse, better = np.zeros((3, 50), dtype=bool), np.ones((3, 50), dtype=bool)
    result = run_gate([(passkey_run(worse), passkey_run(better))], GateOptions())
    assert not result.failed and all(v.result.effect == -100.0 for v in result.cells)


def test_draws_of_documents_without_tokens_have_no_ratio_and_count_as_no_rise(monkeypatch):
    """LongPPL's documents may hold no key token: of four documents, two without, about 1 draw in 16
    holds none with a token. Those draws are left out of the interval (it stays finite) and counted as
    "no rise" in the bootstrap p-value (isolated here from the sign-flip p, which bounds it anyway)."""
    from coca_eval.gate import stats
    from coca_eval.intervals import resample_counts

    tokens = np.array([0.0, 1000.0, 0.0, 1200.0])
    base = tokens * 2.5
    cand = base + tokens * np.array([0.0, 0.04, 0.0, 0.05])
    monkeypatch.setattr(stats, "sign_flip_p", lambda diff, n_draws, seed: 0.0)
    result = paired_ppl_ratio(base, cand, tokens, 0.05, 500, 0)
    undefined = int(np.count_nonzero(resample_counts(4, 500, 0) @ tokens == 0))
    assert undefined > 10
    assert result.p_value == pytest.approx((1 + undefined) / 501)
    assert math.expm1(0.04) - 1e-12 <= result.low <= result.high <= math.expm1(0.05) + 1e-12


def test_a_draw_of_exactly_no_change_counts_as_no_rise():
    """Ties count toward "no rise" in the bootstrap p-value (the mass at or below zero), as do draws
    without a ratio: (1 + 3 ties or falls + 1 undefined) / (4 + 1)."""
    from coca_eval.gate.stats import bootstrap_p

    assert bootstrap_p(np.array([0.0, 0.0, -0.1, 0.2]), 1, 4) == pytest.approx((1 + 3 + 1) / 5)
    assert bootstrap_p(np.array([0.1, 0.2]), 0, 2) == pytest.approx(1 / 3)


def test_a_partial_credit_drop_is_the_mean_paired_difference_held_to_the_sign_flip_floor():
    """Ten samples each 0.05 to 0.15 worse: the effect is their mean 0.1, inside its interval, and p is
    the sign-flip test's exact 1/1024 (the bootstrap alone would claim less); identical scores give no
    drop, p 1."""
    base = np.linspace(0.3, 0.9, 10)
    result = paired_mean_drop(base, base - np.linspace(0.05, 0.15, 10), alpha=0.05, n_boot=2000, seed=0)
    assert math.isclose(result.effect, 0.1) and result.low < 0.1 < result.high
    assert math.isclose(result.p_value, 1 / 1024)
    same = paired_mean_drop(base, base, alpha=0.05, n_boot=2000, seed=0)
    assert same.effect == 0.0 and same.p_value == 1.0
    mixed = paired_mean_drop([1.0, 0.5, 0.0, 0.5], [0.5, 1.0, 0.5, 0.0], alpha=0.05, n_boot=2000, seed=0)
    assert mixed.effect == 0.0 and mixed.p_value > 0.5  # gains cancel losses: no evidence of a drop
