"""One unit for accuracy-like scores: points, 0-100, as RULER, HELMET and their ports print them.

A task whose scores are accuracy-like says so in its spec (``TaskSpec.unit``: ``points``), and every
cell it writes states it (``Cell.unit``, results schema ``coca-eval/3``). A cell written before results
said their unit (a ``coca-eval/1`` or ``/2`` file, a journal line) holds what its task wrote then
(``TaskSpec.old_unit``: passkey wrote fractions, 0-1); a cell that says ``fraction`` holds 0-1 whenever
it was written. Such cells are read in points: the value and the detail that follows it (the task's
``points_detail``: passkey's recorded interval) are scaled by 100, so an old run's report, gate verdicts
and exports are those of the same run written today. Perplexity and other non-accuracy metrics have no
unit and are never touched.
"""

from __future__ import annotations

from coca_eval.results import LOWER_IS_BETTER, SCHEMA, Cell, Run

POINTS, FRACTION = "points", "fraction"
OLD_SCHEMAS = ("coca-eval/1", "coca-eval/2")  # written before cells stated their unit


def cell_unit(cell: Cell, old: bool) -> str | None:
    """The unit of ``cell``'s value: the one it states, else its task's (the one the task wrote then, for
    a cell from an ``old`` file or a journal); None for a score that is not accuracy-like."""
    if cell.unit is not None:
        return cell.unit
    from coca_eval.taskspec import spec_for

    spec = spec_for(cell.task, cell.metric)
    if spec.unit is None or cell.metric.lower() in LOWER_IS_BETTER:
        return None
    return (spec.old_unit or spec.unit) if old else spec.unit


def cell_in_points(cell: Cell, old: bool = False) -> Cell:
    """``cell`` with an accuracy-like value in points and saying so (others as they are)."""
    unit = cell_unit(cell, old)
    if unit is None or (unit == POINTS and cell.unit == POINTS):
        return cell
    if unit == POINTS:
        return cell.model_copy(update={"unit": POINTS})
    from coca_eval.taskspec import spec_for

    scale = spec_for(cell.task, cell.metric).points_detail
    return cell.model_copy(
        update={
            "value": None if cell.value is None else 100.0 * cell.value,
            "detail": scale(cell.detail) if scale is not None else cell.detail,
            "unit": POINTS,
        }
    )


def run_in_points(run: Run) -> Run:
    """A loaded run, every accuracy-like cell in points (an old file's in its task's unit then)."""
    old = run.schema_ in OLD_SCHEMAS
    cells = [cell_in_points(cell, old) for cell in run.cells]
    return run if cells == run.cells else run.model_copy(update={"cells": cells})


def stated_units(run: Run) -> Run:
    """A run about to be written, in the current schema: every accuracy-like cell in points and saying
    so (a run read from an old file and not yet in points is converted as a reader would)."""
    return run_in_points(run).model_copy(update={"schema_": SCHEMA})


def scaled(values, factor: float = 100.0):
    """A number, or a list of numbers (an interval), times ``factor``; None stays None."""
    if isinstance(values, list | tuple):
        return [scaled(v, factor) for v in values]
    return None if values is None else factor * float(values)
