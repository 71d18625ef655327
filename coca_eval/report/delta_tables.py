"""Table 3 style tables: rows as signed differences to another row instead of their own values.

Two shapes, as papers print them: every row against one baseline row (``delta_vs``), or chosen rows
each against its own baseline (``delta_pairs``): the CoCA paper's Table 3 gives CoCA-Strict as its
difference to CoCA-Slack at the same dynamic-NTK factor, one pair per factor.
"""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import format_length
from coca_eval.report.definition import ReportDefinition
from coca_eval.report.intervals import entry_text
from coca_eval.report.layout import Entry, ReportTable, Row, arrange
from coca_eval.report.length_tables import table_title
from coca_eval.results import Cell
from coca_eval.tables import CellGrid, cell_grid


def delta_table(
    key: tuple, cells: Sequence[Cell], definition: ReportDefinition, name: str
) -> ReportTable | None:
    """Every row as signed differences to the ``delta_vs`` row (which keeps its own values); None when
    none is asked for or this table has no such row."""
    base_label = definition.delta_vs
    grid = cell_grid(cells)
    if base_label not in grid.rows:
        return None
    rows = []
    ordered = [base_label] + [label for label in grid.rows if label != base_label]
    for group, labels in arrange(ordered, definition.group_pairs()):
        for label in labels:
            shown = label if label == base_label else f"{label} (delta)"
            rows.append(Row(shown, _entries(grid, label, base_label, definition.digits), group))
    title = table_title(key[0], key[1]) + f": change vs {base_label}"
    return ReportTable(f"{name}_delta", title, [format_length(n) for n in grid.columns], rows)


def paired_delta_table(
    key: tuple, cells: Sequence[Cell], definition: ReportDefinition, name: str
) -> ReportTable | None:
    """For each ``(candidate, baseline)`` pair: the baseline's own values, then the candidate as its
    difference to them. Pairs whose rows are not in this table are left out; None when none is."""
    grid = cell_grid(cells)
    pairs = [(c, b) for c, b in definition.delta_pairs if c in grid.rows and b in grid.rows]
    if not pairs:
        return None
    rows = []
    for candidate, baseline in pairs:
        rows.append(Row(baseline, _entries(grid, baseline, baseline, definition.digits)))
        shown = f"{candidate} (delta vs {baseline})"
        rows.append(Row(shown, _entries(grid, candidate, baseline, definition.digits)))
    title = table_title(key[0], key[1]) + ": change of each row vs its own baseline"
    return ReportTable(f"{name}_paired_delta", title, [format_length(n) for n in grid.columns], rows)


def check_delta_rows(cells: Sequence[Cell], definition: ReportDefinition) -> None:
    """Every row a delta option names exists in the runs: a misspelt label is a one-line user error,
    not a table that silently goes missing."""
    have = dict.fromkeys(c.method for c in cells if c.length is not None)
    named = [("--delta-vs", definition.delta_vs)] if definition.delta_vs is not None else []
    named += [("--delta-pair", label) for pair in definition.delta_pairs for label in pair]
    for option, label in named:
        if label not in have:
            raise CocaEvalError(f"{option} {label!r}: no such method in the runs (have: {', '.join(have)})")


def _entries(grid: CellGrid, label: str, base_label: str, digits: int) -> list[Entry]:
    base = [grid.get(base_label, n) for n in grid.columns]
    mine = [grid.get(label, n) for n in grid.columns]
    return [Entry(_delta(c, b, digits, label == base_label)) for c, b in zip(mine, base, strict=True)]


def _delta(cell: Cell | None, base: Cell | None, digits: int, is_base: bool) -> str:
    if cell is None:
        return ""
    if is_base or cell.status != "ok":
        return entry_text(cell, digits)
    if base is None or base.status != "ok":
        return "n/a"
    return f"{cell.value - base.value:+.{digits}f}"
