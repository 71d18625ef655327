"""Terminal tables fold instead of cutting: on a narrow console every method name, length and value
still reads whole, top to bottom in its own column."""

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


def _column_streams(rendered: str, border: str) -> list[str]:
    """Each column's text read top to bottom with whitespace removed, over the lines drawn with
    ``border`` (``┃`` header, ``│`` body): the pieces of a folded cell join up again."""
    rows = [line.strip(border).split(border) for line in rendered.splitlines() if line.startswith(border)]
    return ["".join("".join(row[i].split()) for row in rows) for i in range(len(rows[0]))]


def _squashed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("width", [40, 60, 80])
def test_narrow_console_folds_names_and_numbers_without_cutting_them(width):
    cells = _cells()
    sink = io.StringIO()
    Console(file=sink, width=width, force_terminal=False).print(rich_table(methods_by_lengths(cells), ""))
    rendered = sink.getvalue()
    assert "…" not in rendered
    assert max(len(line) for line in rendered.splitlines()) <= width
    header, body = _column_streams(rendered, "┃"), _column_streams(rendered, "│")
    assert header == ["method", *(format_length(n) for n in LENGTHS)]
    assert body[0] == "".join(_squashed(label) for label in LABELS)
    for j, length in enumerate(LENGTHS):
        column = [c for c in cells if c.length == length]
        assert body[j + 1] == "".join(cell_text(c) for c in column)
