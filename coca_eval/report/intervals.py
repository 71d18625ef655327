"""Uncertainty next to a printed cell, as its task's spec defines it (Wilson for passkey accuracy, a
document bootstrap for perplexity).

A 100-sample accuracy of 95 points is really "somewhere in 89..98"; a 4-document perplexity moves with
which books were drawn. Both are cheap to show and easy to forget, hence the ``--intervals`` option.
"""

from __future__ import annotations

from coca_eval.results import Cell
from coca_eval.tables import cell_text
from coca_eval.taskspec import spec_for


def cell_interval(cell: Cell) -> tuple[float, float] | None:
    """95 % interval of an ok cell, or None when the run kept nothing to derive one from."""
    interval = spec_for(cell.task, cell.metric).report.interval
    if cell.status != "ok" or interval is None:
        return None
    return interval(cell)


def entry_text(cell: Cell | None, digits: int, intervals: bool = False, show_n: bool = False) -> str:
    """``19.66``, ``OOM``, or with the options ``19.66 [19.10, 20.21] (n=4)``; n counts documents for
    perplexity (the units the interval resamples), samples for passkey, questions for benchmarks."""
    if cell is None:
        return ""
    text = cell_text(cell, digits)
    interval = cell_interval(cell) if intervals else None
    if interval is not None:
        text += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
    if show_n and cell.status == "ok":
        units = spec_for(cell.task, cell.metric).report.units
        count = units(cell) if units is not None else cell.n
        if count is not None:
            text += f" (n={count})"
    return text
