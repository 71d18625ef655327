"""Terminal tables never cut or split a value: on a narrow console every number lies whole on one
line, a table too wide splits into tables of fewer columns (the labels in each), and every method
name still reads whole, top to bottom in its own column."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from coca_eval.lengths import format_length
from coca_eval.results import Cell
from coca_eval.tables import cell_text, methods_by_lengths, rich_table

LABELS = [
    "SmolLM2-135M-Instruct (Q4_1, dequantised) + dynamic NTK x4 & CoCA",
    "baseline-checkpoint-with-a-very-long-name-0123456789",
    "RoFormer",
]
LENGTHS = [512, 1024, 2048, 4096, 8192, 16384, 32768]


def _cells() -> list[Cell]:
    cells = []
    for i, method in enumerate(LABELS):
        for j, length in enumerate(LENGTHS):
            fields = {"task": "ppl", "method": method, "metric": "ppl", "length": length}
            if (i, j) == (1, 6):
                cells.append(Cell(**fields, status="oom"))
            else:
                cells.append(Cell(**fields, value=1234.5678 + 7 * i + j, status="ok"))
    return cells


def _tables(rendered: str) -> list[list[str]]:
    """The rendered text as its tables' lines (a table opens with a ``┏`` line)."""
    tables: list[list[str]] = []
    for line in rendered.splitlines():
        if line.startswith("┏"):
            tables.append([])
        if tables:
            tables[-1].append(line)
    return tables


def _column_streams(lines: list[str], border: str) -> list[str]:
    """Each column's text read top to bottom with whitespace removed, over the lines drawn with
    ``border`` (``┃`` header, ``│`` body): the pieces of a wrapped cell join up again."""
    rows = [line.strip(border).split(border) for line in lines if line.startswith(border)]
    return ["".join("".join(row[i].split()) for row in rows) for i in range(len(rows[0]))]


def _squashed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_a_narrow_console_splits_the_table_and_never_a_number(width):
    cells = _cells()
    sink = io.StringIO()
    Console(file=sink, width=width, force_terminal=False).print(rich_table(methods_by_lengths(cells), ""))
    rendered = sink.getvalue()
    assert "…" not in rendered
    assert max(len(line) for line in rendered.splitlines()) <= width
    words = {w for line in rendered.splitlines() for w in line.replace("│", " ").split()}
    for cell in cells:  # every value (and OOM) is a word of one line, never two halves
        assert cell_text(cell) in words, (width, cell_text(cell))
    headers = []
    for lines in _tables(rendered):
        header, body = _column_streams(lines, "┃"), _column_streams(lines, "│")
        assert header[0] == "method" and body[0] == "".join(_squashed(label) for label in LABELS)
        headers += header[1:]
    assert headers == [format_length(n) for n in LENGTHS]
    # at 80 a quarter of the line for labels (20) and seven 7-character columns need 94 with their
    # rules, so the table splits; at 120 (30 for labels) they need 104 and fit
    assert (len(_tables(rendered)) > 1) is (width < 120)
