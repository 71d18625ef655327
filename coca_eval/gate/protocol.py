"""Whether two runs may be compared at all, and which cells pair up.

A gate that compares a 100-document run with a 50-document one, or keys drawn with another seed,
would report noise as a regression (or hide one). So every parameter that changes numbers must agree,
and each cell must cover the same documents (same ids, same scored tokens) or the same passkey samples
(same index, key and depth), LongPPL's the same key tokens (parameters that only choose the key
tokens may then differ). Anything else is a one-line :class:`IncomparableRuns` (exit code 2).

A cell sampled until its stopping rule was met (``--samples auto``, ``detail["sequential"]``) holds a
prefix of its design's units in a visiting order both runs share, so two such cells that stopped at
different counts are compared on the units both hold (the shorter one's): see :func:`shared_units`.
"""

from __future__ import annotations

from collections.abc import Iterable

from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell, CellPair, Run
from coca_eval.taskspec import spec_for


class IncomparableRuns(CocaEvalError):
    """The two runs were made under different protocols; no statistic can fix that."""


def check_protocol(base: Run, cand: Run) -> None:
    """Same task and the same task parameters (documents, seeds, lengths, template, stride, ...), but
    for those the task compares through its units instead (``GateHooks.unit_params``)."""
    task_b, task_c = base.config.get("task"), cand.config.get("task")
    if task_b != task_c:
        raise IncomparableRuns(f"incomparable runs: the baseline is a {task_b} run, the candidate {task_c}")
    params_b, params_c = base.config.get("params") or {}, cand.config.get("params") or {}
    hooks = spec_for(task_b).gate if task_b else None
    compared_by_units = set(hooks.unit_params) if hooks is not None else set()
    differ = [
        f"{key} {params_b.get(key)!r} vs {params_c.get(key)!r}"
        for key in sorted(set(params_b) | set(params_c))
        if key not in compared_by_units and params_b.get(key) != params_c.get(key)
    ]
    if differ:
        raise IncomparableRuns(
            "incomparable runs: protocols differ (baseline vs candidate): " + "; ".join(differ)
        )


def pair_methods(base: Run, cand: Run) -> list[tuple[str, str]]:
    """Same labels pair with each other; a one-method run pairs with a one-method run whatever the labels
    (a new checkpoint usually gets a new directory name)."""
    labels_b, labels_c = _labels(base.cells), _labels(cand.cells)
    if set(labels_b) == set(labels_c):
        return [(label, label) for label in labels_b]
    if len(labels_b) == 1 and len(labels_c) == 1:
        return [(labels_b[0], labels_c[0])]
    raise IncomparableRuns(
        f"incomparable runs: methods differ (baseline {labels_b}, candidate {labels_c}); "
        "use the same method labels or one method per run"
    )


def select_method(run: Run, label: str, side: str) -> Run:
    """Only the cells of one method (row) of ``run``: so two rows of one run can be gated against each
    other, e.g. ``+ dynamic NTK & CoCA`` as the candidate against ``+ dynamic NTK`` as the baseline."""
    cells = [c for c in run.cells if c.method == label]
    if not cells:
        raise CocaEvalError(
            f"--{side}-method {label!r} is not a method of that run (it has {_labels(run.cells)})"
        )
    return run.model_copy(update={"cells": cells})


def pair_cells(base: Run, cand: Run) -> list[CellPair]:
    """Every baseline cell with its candidate twin, after checking both runs hold the same cells."""
    check_protocol(base, cand)
    pairs = []
    for label_b, label_c in pair_methods(base, cand):
        cells_b = {cell_key(c): c for c in base.cells if c.method == label_b}
        cells_c = {cell_key(c): c for c in cand.cells if c.method == label_c}
        if set(cells_b) != set(cells_c):
            missing = sorted(set(cells_b) ^ set(cells_c), key=str)
            raise IncomparableRuns(f"incomparable runs: cells differ for {label_b!r}: {missing}")
        for key, cell in cells_b.items():
            pair = CellPair(cell, cells_c[key])
            check_units(pair)
            pairs.append(pair)
    return pairs


def check_units(pair: CellPair) -> None:
    """The units behind the two cells (documents, samples: the task's spec says) must be the same."""
    hooks = spec_for(pair.base.task, pair.base.metric).gate
    if hooks is None:
        return
    for key in hooks.protocol_keys:
        got_b, got_c = pair.base.detail.get(key), pair.cand.detail.get(key)
        if got_b is not None and got_c is not None and got_b != got_c:
            raise IncomparableRuns(f"incomparable runs: {key} {got_b!r} vs {got_c!r} at {pair.where}")
    for key in hooks.strict_keys:
        got_b, got_c = pair.base.detail.get(key, "none"), pair.cand.detail.get(key, "none")
        if got_b != got_c:
            raise IncomparableRuns(f"incomparable runs: {key} {got_b!r} vs {got_c!r} at {pair.where}")
    if hooks.units is None:
        return
    units_b, units_c = shared_units(pair, hooks.units(pair.base), hooks.units(pair.cand))
    if units_b and units_c and units_b != units_c:
        why = (
            hooks.units_mismatch(units_b, units_c, pair.where)
            if hooks.units_mismatch is not None
            else f"{hooks.units_differ} differ at {pair.where}"
        )
        raise IncomparableRuns(f"incomparable runs: {why}")


def stopped_early(pair: CellPair) -> bool:
    """Whether either cell was sampled until a stopping rule was met (and may hold fewer units)."""
    return "sequential" in pair.base.detail or "sequential" in pair.cand.detail


def shared_units(pair: CellPair, units_b: dict, units_c: dict) -> tuple[dict, dict]:
    """The units each side's test may use: all of them, or, for cells that stopped early, those both
    cells hold. Two runs of one design and rule visit its units in the same order, so the common ones
    are the prefix the earlier stop spent; they must still be the very same units (same key, depth)."""
    if not stopped_early(pair):
        return units_b, units_c
    common = units_b.keys() & units_c.keys()
    return {k: units_b[k] for k in common}, {k: units_c[k] for k in common}


def _labels(cells: Iterable[Cell]) -> list[str]:
    return list(dict.fromkeys(c.method for c in cells))


def cell_key(cell: Cell) -> tuple:
    """Which cell of the other run a cell pairs with (its method aside)."""
    return (cell.task, cell.metric, cell.dataset, cell.length)
