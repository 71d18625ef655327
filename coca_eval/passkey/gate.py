"""The gate's paired test for passkey: exact McNemar on the same samples (see gate.stats)."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair
from coca_eval.gate.stats import PairedResult, mcnemar_drop
from coca_eval.passkey.report import sample_records


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """Accuracy drop of the candidate on the baseline's samples, or why there is no test."""
    samples_b = {s.index: s.correct for s in sample_records(pair.base)}
    samples_c = {s.index: s.correct for s in sample_records(pair.cand)}
    if not samples_b or not samples_c:
        return "no per-sample results in the run"
    order = sorted(samples_b)
    return len(order), mcnemar_drop([samples_b[i] for i in order], [samples_c[i] for i in order])
