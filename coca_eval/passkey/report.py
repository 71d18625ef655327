"""How reports and the gate read a passkey cell: its protocol caption, interval and samples."""

from __future__ import annotations

from coca_eval.intervals import wilson_interval
from coca_eval.passkey.records import SampleRecord, records_of
from coca_eval.results import Cell, Run, units_by_key
from coca_eval.sequential import StoppingRule


def sample_records(cell: Cell) -> list[SampleRecord]:
    """The per-sample records a cell keeps (empty for a cell without them)."""
    return records_of(cell.detail)


def protocol_line(run: Run) -> str:
    params = run.config.get("params") or {}
    samples = f"{params.get('samples')} samples"
    if params.get("samples") == "auto":
        rule = StoppingRule(params["max_samples"], params.get("target_width"), params.get("threshold"))
        samples = rule.caption() + " (n: the samples a cell spent; brackets: its confidence sequence)"
    return (
        f"Passkey: {samples} per length, template {params.get('template')}, "
        f"depths {params.get('depths')}, greedy <= {params.get('max_new_tokens')} new tokens, "
        f"seed {params.get('seed')}."
    )


def interval(cell: Cell) -> tuple[float, float] | None:
    """The anytime-valid interval of a cell that stopped by a rule (``--samples auto``: Wilson's would
    not hold at a count the data chose), else the Wilson 95 % interval it recorded, else one from its
    value and n; in points, as the value (the rule records its own in fractions)."""
    if "sequential" in cell.detail:
        low, high = cell.detail["sequential"]["interval"]
        return 100 * float(low), 100 * float(high)
    if "wilson95" in cell.detail:
        low, high = cell.detail["wilson95"]
        return float(low), float(high)
    if not cell.n:
        return None
    low, high = wilson_interval(round(cell.value * cell.n / 100), cell.n)
    return 100 * low, 100 * high


def unit_ids(cell: Cell) -> dict[int, tuple]:
    """Sample index -> (key, depth): two runs' cells must hold the very same samples to be compared, and
    an index held twice is refused (read on every load)."""
    return units_by_key((s.index, (s.key, s.depth)) for s in sample_records(cell))
