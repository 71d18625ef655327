"""The gate's decision: a cell regresses when its change is both beyond the tolerance and significant.

Tolerance alone would fail on noise; significance alone would fail on a real but negligible change.
Every tested cell of every run pair enters one Holm correction, so a candidate that is the baseline
model up to noise fails at most ``alpha`` of the time in total, however many lengths are gated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from coca_eval.errors import CocaEvalError
from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair, pair_cells
from coca_eval.gate.runs import RunCheck
from coca_eval.gate.stats import PairedResult, holm_adjust
from coca_eval.results import Run
from coca_eval.tables import STATUS_TEXT
from coca_eval.taskspec import spec_for

INCONCLUSIVE = "inconclusive"
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
    value_change: float | None = None  # set when no paired test was possible (values vs tolerance)


@dataclass
class GateResult:
    cells: list[CellVerdict]
    options: GateOptions
    notes: list[str] = field(default_factory=list)
    runs: list[RunCheck] = field(default_factory=list)  # the tasks' run-level checks

    @property
    def regressed(self) -> bool:
        return any(c.verdict == "regression" for c in self.cells) or any(r.failed for r in self.runs)

    @property
    def inconclusive(self) -> bool:
        return any(c.verdict == INCONCLUSIVE for c in self.cells)

    @property
    def failed(self) -> bool:
        """A regression; or, with ``--require-power``, a cell that could not have shown one."""
        return self.regressed or (self.options.require_power and self.inconclusive)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def run_gate(pairs: Sequence[tuple[Run, Run]], options: GateOptions) -> GateResult:
    """Compare each (baseline, candidate) run pair; raises :class:`IncomparableRuns` before any test."""
    cell_pairs = [cell for base, cand in pairs for cell in pair_cells(base, cand)]
    verdicts = [_test(pair, options, index) for index, pair in enumerate(cell_pairs)]
    if not any(v.verdict != "skipped" for v in verdicts):
        why = "; ".join(dict.fromkeys(v.reason for v in verdicts)) or "the runs hold no cells"
        raise CocaEvalError(f"the gate compared no cell ({why}); a gate that checks nothing cannot pass")
    tested = [v for v in verdicts if v.result is not None]
    for verdict, adjusted in zip(tested, holm_adjust([v.result.p_value for v in tested]), strict=True):
        verdict.p_adjusted = adjusted
        _decide(verdict, options)
    notes = _notes(tested, options) + _task_notes(cell_pairs)
    return GateResult(verdicts, options, notes, run_checks(pairs, options))


def _test(pair: CellPair, options: GateOptions, index: int) -> CellVerdict:
    """The paired test of one cell, or why there is none (failed cells decide without a test)."""
    base, cand = pair.base, pair.cand
    hooks = spec_for(base.task, base.metric).gate
    if hooks is None:
        return CellVerdict(pair, "skipped", f"no paired test for task {base.task}")
    if base.status != "ok":
        return CellVerdict(pair, "skipped", f"baseline is {STATUS_TEXT[base.status]}")
    if cand.status != "ok":
        return CellVerdict(pair, "regression", f"candidate is {STATUS_TEXT[cand.status]}")
    outcome = hooks.test(pair, options, options.seed + 7919 * index)  # independent draws per cell
    if isinstance(outcome, str):
        return _by_values(pair, options, outcome)
    units, result = outcome
    return CellVerdict(pair, units=units, result=result)


def _by_values(pair: CellPair, options: GateOptions, why: str) -> CellVerdict:
    """No per-unit data (or too little for a test): the values against the tolerance, saying so, so
    that a run without detail can still fail the gate instead of passing unexamined."""
    hooks = spec_for(pair.base.task, pair.base.metric).gate
    base, cand = pair.base.value, pair.cand.value
    if hooks.effect.percent and base == 0:
        return CellVerdict(pair, "skipped", f"{why}; a baseline of 0 has no relative change")
    change = hooks.effect.sign * (cand - base) / (base if hooks.effect.percent else 1.0)
    beyond = change > hooks.tolerance(options)
    reason = f"no paired test ({why}): value change {hooks.effect.text(change)} " + (
        "beyond tolerance" if beyond else "within tolerance"
    )
    return CellVerdict(pair, "regression" if beyond else "pass", reason, value_change=change)


def _decide(verdict: CellVerdict, options: GateOptions) -> None:
    limit = spec_for(verdict.pair.base.task).gate.tolerance(options)
    above = verdict.result.effect > limit
    significant = verdict.p_adjusted <= options.alpha
    verdict.verdict = "regression" if above and significant else "pass"
    verdict.reason = (SIGNIFICANT if significant else NOT_SIGNIFICANT) if above else WITHIN
    if verdict.verdict == "pass" and (why := _powerless(verdict, limit)):
        verdict.verdict, verdict.reason = INCONCLUSIVE, why


def _powerless(verdict: CellVerdict, limit: float) -> str | None:
    """Why a passing cell says nothing (None when it does): a baseline scoring 0 on a higher-is-better
    metric has nothing to lose, and a 95 % interval of the change that reaches past the tolerance does
    not rule out a regression of the tolerance: the protocol had too few units to see one."""
    spec = spec_for(verdict.pair.base.task, verdict.pair.base.metric)
    if spec.higher_is_better and verdict.pair.base.value == 0:
        return "the baseline scores 0: no drop can be seen"
    if verdict.result.high > limit:
        shown = "{:.2%}" if spec.gate.effect.percent else "{:.2f}"
        return (
            f"its 95 % interval reaches {shown.format(verdict.result.high)}, past the tolerance "
            f"({shown.format(limit)}): too few units to rule out a regression"
        )
    return None


def _notes(tested: Sequence[CellVerdict], options: GateOptions) -> list[str]:
    """Say so when the protocol is too small for any change to be significant: a test whose p-value
    cannot go below ``min_p_value(units)`` (2^-D for D documents), times the number of tests (Holm),
    never reaches ``alpha``."""
    notes = []
    for task in dict.fromkeys(v.pair.base.task for v in tested):
        hooks = spec_for(task).gate
        units = [v.units for v in tested if v.pair.base.task == task]
        if hooks.min_p_value is None or len(tested) * hooks.min_p_value(min(units)) <= options.alpha:
            continue
        notes.append(
            f"with {min(units)} {hooks.units_name} and {len(tested)} gated cells no {hooks.change_name} can "
            f"be significant at alpha {options.alpha:g}; gate on more {hooks.units_name} "
            f"({hooks.more_units_hint}) or fewer lengths"
        )
    return notes


def _task_notes(pairs: Sequence[CellPair]) -> list[str]:
    """What each task says about its compared cells beyond the verdicts (its ``GateHooks.notes``)."""
    notes = []
    for task in dict.fromkeys(pair.base.task for pair in pairs):
        hooks = spec_for(task).gate
        if hooks is not None and hooks.notes is not None:
            notes += hooks.notes([pair for pair in pairs if pair.base.task == task])
    return notes


def run_checks(pairs: Sequence[tuple[Run, Run]], options: GateOptions) -> list[RunCheck]:
    """Every run pair's task-level checks, in the order of the pairs."""
    checks = []
    for base, cand in pairs:
        task = base.config.get("task") or (base.cells[0].task if base.cells else None)
        hooks = spec_for(task).gate if task else None
        if hooks is not None and hooks.run_checks is not None:
            checks.extend(hooks.run_checks(base, cand, options))
    return checks
