"""The gate's paired test for passkey: exact McNemar on the same samples (see gate.stats), its effect in
points (x 100), the unit of the cells and of ``--max-acc-drop``."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair, shared_units
from coca_eval.gate.stats import PairedResult, mcnemar_drop
from coca_eval.passkey.report import sample_records


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """Accuracy drop (points) of the candidate on the samples both cells hold, or why there is no test.

    Fixed-count cells hold the same samples (the protocol check saw to it); cells that stopped early
    (``--samples auto``) are paired on the samples both spent (see ``gate.protocol.shared_units``)."""
    samples_b = {s.index: s.correct for s in sample_records(pair.base)}
    samples_c = {s.index: s.correct for s in sample_records(pair.cand)}
    if not samples_b or not samples_c:
        return "no per-sample results in the run"
    order = sorted(shared_units(pair, samples_b, samples_c)[0])
    result = mcnemar_drop([samples_b[i] for i in order], [samples_c[i] for i in order])
    return len(order), PairedResult(100 * result.effect, 100 * result.low, 100 * result.high, result.p_value)
