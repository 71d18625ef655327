"""The gate's paired tests for the generation families: exact McNemar on full-credit correctness of
the same samples per cell, and, for families whose scores are graded (a ratio, an F1), the paired
mean score drop.

A sample's score can be partial (two of four values found), but McNemar needs right/wrong pairs, so
a sample counts as right when it earns full credit, RULER's own reading of a retrieved answer. The
effect is reported in score points (x 100), the scale of the cells and of the gate's tolerance.
"""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair, shared_units
from coca_eval.gate.stats import PairedResult, mcnemar_drop
from coca_eval.generation.records import records_of


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """Full-credit drop of the candidate on the samples both cells hold (points), or why there is no test.

    Fixed-count cells hold the same samples (the protocol check saw to it); cells that stopped early
    (``--samples auto``) are paired on the samples both spent (see ``gate.protocol.shared_units``)."""
    base = {s.index: s.full_credit for s in records_of(pair.base.detail)}
    cand = {s.index: s.full_credit for s in records_of(pair.cand.detail)}
    if not base or not cand:
        return "no per-sample results in the run"
    order = sorted(shared_units(pair, base, cand)[0])
    result = mcnemar_drop([base[i] for i in order], [cand[i] for i in order])
    points = PairedResult(100 * result.effect, 100 * result.low, 100 * result.high, result.p_value)
    return len(order), points


def paired_mean_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """For a family whose sample scores are graded between 0 and 1 (MRCR's ratio, GraphWalks' F1): the
    candidate's mean score drop on the samples both cells hold, with the paired sample bootstrap's
    interval and the larger of its p and the exact sign-flip test's; McNemar as above where every
    score is 0 or 1. Points, as the cells."""
    from coca_eval.gate.stats import paired_mean_drop

    base = {s.index: s.score for s in records_of(pair.base.detail)}
    cand = {s.index: s.score for s in records_of(pair.cand.detail)}
    if not base or not cand:
        return "no per-sample results in the run"
    order = sorted(shared_units(pair, base, cand)[0])
    scores_b, scores_c = [base[i] for i in order], [cand[i] for i in order]
    if set(scores_b + scores_c) <= {0.0, 1.0}:
        result = mcnemar_drop([v == 1.0 for v in scores_b], [v == 1.0 for v in scores_c])
    else:
        result = paired_mean_drop(scores_b, scores_c, options.alpha, options.n_boot, seed)
    return len(order), PairedResult(100 * result.effect, 100 * result.low, 100 * result.high, result.p_value)
