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


def rich_table(frame: pd.DataFrame, title: str, whole_labels: bool = False) -> FittedTable:
    """The frame as a terminal table that never cuts or splits a number, an interval's part or a
    verdict: every value column is at least as wide as its longest word, labels wrap at spaces (a
    method name longer than a quarter of the line folds), and a frame too wide for the console at
    that (80 columns, a CI log) prints as several tables, each with the labels and as many value
    columns as fit. ``whole_labels``: labels are names one types (presets, tasks), never folded."""
    return FittedTable(frame, title, whole_labels)


LABEL_SHARE = 4  # a label's unbroken word may take up to a quarter of the line before it folds


class FittedTable:
    """A rich renderable: :func:`rich_table`'s table or tables, laid out for the console's width."""

    def __init__(self, frame: pd.DataFrame, title: str, whole_labels: bool = False) -> None:
        self.frame, self.title, self.whole_labels = frame, title, whole_labels

    def __rich_console__(self, console, options):
        width = options.max_width
        texts = [[self.frame.index.name or "", *map(str, self.frame.index)]]
        texts += [[str(c), *map(str, self.frame[c])] for c in self.frame.columns]
        natural = [max(_plain_widths(t)) for t in texts]
        needs = [max(max(_word_widths(t)), 1) for t in texts]
        if not self.whole_labels:
            needs[0] = min(needs[0], width // LABEL_SHARE)
        for first, columns in enumerate(_column_chunks(needs, width)):
            chosen = [0, *(j + 1 for j in columns)]
            widths = _fit([natural[k] for k in chosen], [needs[k] for k in chosen], width)
            yield self._table(columns, widths, self.title if first == 0 else "")

    def _table(self, columns: list[int], widths: list[int], title: str) -> Table:
        table = Table(title=title or None, title_justify="left")
        table.add_column(self.frame.index.name or "", style="bold", overflow="fold", width=widths[0])
        for j, width in zip(columns, widths[1:], strict=True):
            justify = "right" if _numbers(self.frame.iloc[:, j]) else "left"
            table.add_column(str(self.frame.columns[j]), justify=justify, overflow="fold", width=width)
        for name, row in self.frame.iterrows():
            table.add_row(str(name), *[_styled(row.iloc[j]) for j in columns])
        return table


PROSE = 32  # a cell longer than this reads as prose (a description): its column aligns left


def _numbers(values) -> bool:
    """Whether a column reads as numbers (scores, lengths, readings such as "undefined (no bar: 0 at
    1k)"): those align right; prose (a long cell) and plain words (no digit anywhere) align left."""
    texts = [_plain(v).strip() for v in values]
    return all(len(t) <= PROSE for t in texts) and any(ch.isdigit() for t in texts for ch in t)


def _plain(text: str) -> str:
    from rich.text import Text

    return Text.from_markup(str(text)).plain


def _plain_widths(texts) -> list[int]:
    return [len(_plain(t)) for t in texts]


def _word_widths(texts) -> list[int]:
    """The length of each run without spaces in ``texts`` as printed (rich markup removed)."""
    return [len(word) for t in texts for word in _plain(t).split()] or [1]


def _frame_cost(count: int) -> int:
    """What a rich table of ``count`` columns draws beside their text: a space each side and a rule
    per column, and the outer edge."""
    return 3 * count + 1


def _column_chunks(needs: list[int], width: int) -> list[list[int]]:
    """The value columns (``needs[1:]``; ``needs[0]`` is the labels') in order, as many per table as
    fit ``width`` at their narrowest beside the labels; a column too wide even alone gets a table of
    its own."""
    chunks: list[list[int]] = [[]]
    for j, need in enumerate(needs[1:]):
        chosen = [needs[0], *(needs[k + 1] for k in chunks[-1]), need]
        if chunks[-1] and sum(chosen) + _frame_cost(len(chosen)) > width:
            chunks.append([])
        chunks[-1].append(j)
    return chunks


def _fit(natural: list[int], needs: list[int], width: int) -> list[int]:
    """Column widths within ``width``: each its text's whole width where they all fit, else the
    columns with most to spare narrowed one character at a time, never below their longest word."""
    widths = list(natural)
    excess = sum(widths) + _frame_cost(len(widths)) - width
    while excess > 0:
        spare = [w - n for w, n in zip(widths, needs, strict=True)]
        j = max(range(len(widths)), key=spare.__getitem__)
        if spare[j] <= 0:
            break
        widths[j] -= 1
        excess -= 1
    return widths


def _styled(text: str) -> str:
    return f"[red]{text}[/red]" if text in STATUS_TEXT.values() else text
