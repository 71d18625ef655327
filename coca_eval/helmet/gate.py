"""The gate's run-level check for HELMET: per paired method and category, the candidate's effective
length must not be shorter than the baseline's, both read at the baseline's bar
(:func:`coca_eval.generation.relative.relative_length_checks`)."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.results import Run


def effective_length_checks(base: Run, cand: Run, options: GateOptions) -> list:
    from coca_eval.generation.relative import relative_length_checks
    from coca_eval.helmet.report import category_groups, run_share

    return relative_length_checks(base, cand, "helmet", run_share([base]), category_groups)
