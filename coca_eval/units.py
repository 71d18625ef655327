"""One unit for accuracy-like scores: points, 0-100, as RULER, HELMET and their ports print them.

A task whose scores are accuracy-like says so in its spec (``TaskSpec.unit``: ``points``), and every
cell it writes states it (``Cell.unit``, results schema ``coca-eval/3``). A cell written before results
said their unit (a ``coca-eval/1`` or ``/2`` file, a journal line) holds what its task wrote then
(``TaskSpec.old_unit``: passkey wrote fractions, 0-1); a cell that says ``fraction`` holds 0-1 whenever
it was written. Such cells are read in points: the value and the detail that follows it (the task's
``points_detail``: passkey's recorded interval) are scaled by 100, so an old run's report, gate verdicts
and exports are those of the same run written today. Perplexity and other non-accuracy metrics have no
unit and are never touched.

The functions here take the task's spec (or a way to find it) from the caller, so the registry reads
through them without a cycle: :func:`coca_eval.taskspec.load_checked_run` reads every results file in
points, :func:`coca_eval.taskspec.save_run_in_points` writes every run with its units stated, and the
journal reads its cells through :func:`coca_eval.taskspec.cell_in_points`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coca_eval.results import LOWER_IS_BETTER, SCHEMA, Cell, Run

POINTS, FRACTION = "points", "fraction"
OLD_SCHEMAS = ("coca-eval/1", "coca-eval/2")  # written before cells stated their unit
SpecOf = Callable[[str, str | None], Any]  # (task, metric) -> its TaskSpec: coca_eval.taskspec.spec_for


def cell_unit(cell: Cell, spec: Any, old: bool) -> str | None:
    """The unit of ``cell``'s value: the one it states, else its task's (``spec``: the one the task
    wrote then, for a cell from an ``old`` file or a journal); None for a score that is not
    accuracy-like."""
    if cell.unit is not None:
        return cell.unit
    if spec.unit is None or cell.metric.lower() in LOWER_IS_BETTER:
        return None
    return (spec.old_unit or spec.unit) if old else spec.unit


def cell_in_points(cell: Cell, spec: Any, old: bool = False) -> Cell:
    """``cell`` (of the task ``spec`` describes) with an accuracy-like value in points and saying so;
    others as they are."""
    unit = cell_unit(cell, spec, old)
    if unit is None or (unit == POINTS and cell.unit == POINTS):
        return cell
    if unit == POINTS:
        return cell.model_copy(update={"unit": POINTS})
    scale = spec.points_detail
    return cell.model_copy(
        update={
            "value": None if cell.value is None else 100.0 * cell.value,
            "detail": scale(cell.detail) if scale is not None else cell.detail,
            "unit": POINTS,
        }
    )


def run_in_points(run: Run, spec_of: SpecOf) -> Run:
    """``run`` in the current schema: every accuracy-like cell in points and saying so (a run read from
    an old file: its unit-less cells in their task's unit then). ``spec_of`` finds each cell's spec."""
    old = run.schema_ in OLD_SCHEMAS
    cells = [cell_in_points(cell, spec_of(cell.task, cell.metric), old) for cell in run.cells]
    if cells == run.cells and run.schema_ == SCHEMA:
        return run
    return run.model_copy(update={"cells": cells, "schema_": SCHEMA})


def scaled(values, factor: float = 100.0):
    """A number, or a list of numbers (an interval), times ``factor``; None stays None."""
    if isinstance(values, list | tuple):
        return [scaled(v, factor) for v in values]
    return None if values is None else factor * float(values)
