"""The gate's decision: a cell regresses when its change is both beyond the tolerance and significant.

Tolerance alone would fail on noise; significance alone would fail on a real but negligible change.
Every tested cell of every run pair enters one Holm correction, so a candidate that is the baseline
model up to noise fails at most ``alpha`` of the time in total, however many lengths are gated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair, pair_cells
from coca_eval.gate.stats import PairedResult, holm_adjust, mcnemar_drop, paired_ppl_ratio
from coca_eval.results import Run
from coca_eval.tables import STATUS_TEXT

WITHIN = "within tolerance"
NOT_SIGNIFICANT = "beyond tolerance, not significant"
SIGNIFICANT = "beyond tolerance and significant"


@dataclass
class CellVerdict:
    """One gated cell; ``effect`` is the change in the worse direction (PPL rise, accuracy drop)."""

    pair: CellPair
    verdict: str = "pass"
    reason: str = ""
    units: int = 0
    result: PairedResult | None = None
    p_adjusted: float | None = None


@dataclass
class GateResult:
    cells: list[CellVerdict]
    options: GateOptions
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.verdict == "regression" for c in self.cells)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def run_gate(pairs: Sequence[tuple[Run, Run]], options: GateOptions) -> GateResult:
    """Compare each (baseline, candidate) run pair; raises :class:`IncomparableRuns` before any test."""
    cell_pairs = [cell for base, cand in pairs for cell in pair_cells(base, cand)]
    verdicts = [_test(pair, options, index) for index, pair in enumerate(cell_pairs)]
    tested = [v for v in verdicts if v.result is not None]
    for verdict, adjusted in zip(tested, holm_adjust([v.result.p_value for v in tested]), strict=True):
        verdict.p_adjusted = adjusted
        _decide(verdict, options)
    return GateResult(verdicts, options, _notes(tested, options))


def tolerance(task: str, options: GateOptions) -> float:
    return options.max_ppl_rise if task == "ppl" else options.max_acc_drop


def _test(pair: CellPair, options: GateOptions, index: int) -> CellVerdict:
    """The paired test of one cell, or why there is none (failed cells decide without a test)."""
    base, cand = pair.base, pair.cand
    if base.task not in ("ppl", "passkey"):
        return CellVerdict(pair, "skipped", f"no paired test for task {base.task}")
    if base.status != "ok":
        return CellVerdict(pair, "skipped", f"baseline is {STATUS_TEXT[base.status]}")
    if cand.status != "ok":
        return CellVerdict(pair, "regression", f"candidate is {STATUS_TEXT[cand.status]}")
    return _test_ppl(pair, options, index) if base.task == "ppl" else _test_passkey(pair)


def _test_ppl(pair: CellPair, options: GateOptions, index: int) -> CellVerdict:
    docs_b = {d["doc_id"]: d for d in pair.base.detail.get("docs", [])}
    docs_c = {d["doc_id"]: d for d in pair.cand.detail.get("docs", [])}
    if not docs_b or not docs_c:
        return CellVerdict(pair, "skipped", "no per-document NLL in the run")
    ids = list(docs_b)
    result = paired_ppl_ratio(
        [docs_b[i]["nll_sum"] for i in ids],
        [docs_c[i]["nll_sum"] for i in ids],
        [docs_b[i]["tokens"] for i in ids],
        options.alpha,
        options.n_boot,
        options.seed + 7919 * index,  # independent draws per cell, reproducible from --seed
    )
    return CellVerdict(pair, units=len(ids), result=result)


def _test_passkey(pair: CellPair) -> CellVerdict:
    samples_b = {s["index"]: s["correct"] for s in pair.base.detail.get("samples", [])}
    samples_c = {s["index"]: s["correct"] for s in pair.cand.detail.get("samples", [])}
    if not samples_b or not samples_c:
        return CellVerdict(pair, "skipped", "no per-sample results in the run")
    order = sorted(samples_b)
    result = mcnemar_drop([samples_b[i] for i in order], [samples_c[i] for i in order])
    return CellVerdict(pair, units=len(order), result=result)


def _decide(verdict: CellVerdict, options: GateOptions) -> None:
    limit = tolerance(verdict.pair.base.task, options)
    above = verdict.result.effect > limit
    significant = verdict.p_adjusted <= options.alpha
    verdict.verdict = "regression" if above and significant else "pass"
    verdict.reason = (SIGNIFICANT if significant else NOT_SIGNIFICANT) if above else WITHIN


def _notes(tested: Sequence[CellVerdict], options: GateOptions) -> list[str]:
    """Say so when the protocol is too small for any perplexity change to be significant: D documents
    give an exact p-value of at least 2^-D, and Holm multiplies the smallest one by the number of tests."""
    docs = [v.units for v in tested if v.pair.base.task == "ppl"]
    if not docs or len(tested) * 2.0 ** -min(docs) <= options.alpha:
        return []
    return [
        f"with {min(docs)} documents and {len(tested)} gated cells no perplexity change can be significant "
        f"at alpha {options.alpha:g}; gate on more documents (--num-docs) or fewer lengths"
    ]
