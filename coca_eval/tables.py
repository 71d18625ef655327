"""Methods x lengths tables: pandas for files, rich for the terminal (the papers' Table 1/2 layout)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from rich.table import Table

from coca_eval.lengths import format_length
from coca_eval.results import Cell

STATUS_TEXT = {"oom": "OOM", "inf": "inf", "error": "error", "partial": "partial"}


def cell_text(cell: Cell, digits: int = 2) -> str:
    """How a paper prints a cell: the value, or ``OOM`` / ``inf`` / ``error``."""
    return f"{cell.value:.{digits}f}" if cell.status == "ok" else STATUS_TEXT[cell.status]


@dataclass
class CellGrid:
    """Cells placed by two of their fields: rows in first-seen order, columns sorted, gaps ``None``.

    Tables, bold-best marking and deltas all need the cells themselves (status, n, detail), not their
    printed text, so this is the one place that lays cells out.
    """

    rows: list
    columns: list
    cells: dict[tuple, Cell]

    def get(self, row, column) -> Cell | None:
        return self.cells.get((row, column))

    def column(self, column) -> list[Cell | None]:
        return [self.get(row, column) for row in self.rows]


def cell_grid(
    cells: Sequence[Cell], row: str = "method", column: str = "length", sort: bool = True
) -> CellGrid:
    """Lay cells out by two of their fields; columns sorted (lengths) unless ``sort`` is off (methods)."""
    placed = {(getattr(c, row), getattr(c, column)): c for c in cells}
    rows = list(dict.fromkeys(r for r, _ in placed))
    columns = list(dict.fromkeys(col for _, col in placed))
    columns = sorted(columns, key=_sort_key) if sort else columns
    return CellGrid(rows, columns, placed)


def best_positions(cells: Sequence[Cell | None], higher: bool, digits: int) -> set[int]:
    """Positions of the best value as printed (ties share the bold, as in the papers); none when fewer
    than two values compete, since a lone bold number says nothing."""
    printed = {i: round(c.value, digits) for i, c in enumerate(cells) if c is not None and c.status == "ok"}
    if len(printed) < 2:
        return set()
    best = max(printed.values()) if higher else min(printed.values())
    return {i for i, value in printed.items() if value == best}


def methods_by_lengths(cells: Sequence[Cell], digits: int = 2) -> pd.DataFrame:
    """Rows = methods in the order they ran, columns = window lengths, entries = printed cells."""
    grid = cell_grid(cells)
    text = [[_text(grid.get(r, c), digits) for c in grid.columns] for r in grid.rows]
    table = pd.DataFrame(text, index=grid.rows, columns=[format_length(int(n)) for n in grid.columns])
    table.index.name = "method"
    return table


def _text(cell: Cell | None, digits: int) -> str:
    return "" if cell is None else cell_text(cell, digits)


def _sort_key(value) -> tuple:
    """Numbers (lengths) in order, then any names (datasets) alphabetically."""
    return (0, value, "") if isinstance(value, int | float) else (1, 0, str(value))


def rich_table(frame: pd.DataFrame, title: str) -> Table:
    """Columns fold instead of cutting: a narrow terminal (80 columns, a CI log) must never turn a method
    name into "SmolLM…" or split a number's digits from its interval."""
    table = Table(title=title or None, title_justify="left")
    table.add_column(frame.index.name or "", style="bold", overflow="fold")
    for column in frame.columns:
        table.add_column(str(column), justify="right", overflow="fold")
    for label, row in frame.iterrows():
        table.add_row(str(label), *[_styled(v) for v in row])
    return table


def _styled(text: str) -> str:
    return f"[red]{text}[/red]" if text in STATUS_TEXT.values() else text
