"""Methods x lengths tables: pandas for files, rich for the terminal (the papers' Table 1/2 layout)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from rich.table import Table

from coca_eval.lengths import format_length
from coca_eval.results import Cell

STATUS_TEXT = {"oom": "OOM", "inf": "inf", "error": "error"}


def cell_text(cell: Cell, digits: int = 2) -> str:
    """How a paper prints a cell: the value, or ``OOM`` / ``inf`` / ``error``."""
    return f"{cell.value:.{digits}f}" if cell.status == "ok" else STATUS_TEXT[cell.status]


def methods_by_lengths(cells: Sequence[Cell], digits: int = 2) -> pd.DataFrame:
    """Rows = methods in the order they ran, columns = window lengths, entries = printed cells."""
    records = [{"method": c.method, "length": c.length, "text": cell_text(c, digits)} for c in cells]
    frame = pd.DataFrame.from_records(records)
    table = frame.pivot(index="method", columns="length", values="text")
    methods = list(dict.fromkeys(c.method for c in cells))
    table = table.reindex(index=methods, columns=sorted(table.columns)).fillna("")
    table.columns = [format_length(int(n)) for n in table.columns]
    table.index.name = "method"
    return table


def rich_table(frame: pd.DataFrame, title: str) -> Table:
    table = Table(title=title or None, title_justify="left")
    table.add_column(frame.index.name or "", style="bold")
    for column in frame.columns:
        table.add_column(str(column), justify="right")
    for label, row in frame.iterrows():
        table.add_row(str(label), *[_styled(v) for v in row])
    return table


def _styled(text: str) -> str:
    return f"[red]{text}[/red]" if text in STATUS_TEXT.values() else text
