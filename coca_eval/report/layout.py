"""A report table before it has a format: rows of printed entries, grouped, some in bold.

Markdown, LaTeX, CSV, HTML and the terminal all render this one structure, so what is bold, how an
``OOM`` cell reads and where a group starts are decided once, not per format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from coca_eval.results import Cell
from coca_eval.tables import STATUS_TEXT, best_positions


@dataclass(frozen=True)
class Entry:
    text: str = ""
    bold: bool = False


@dataclass
class Row:
    label: str
    entries: list[Entry]
    group: str | None = None


def safe_stem(text: str) -> str:
    """A file stem made from names a results file chose (task, method, dataset): letters, digits,
    ``._-`` only and no leading dot, so ``../../x``, ``/tmp/x`` or ``hf:org/name`` can neither leave
    the report folder nor break a LaTeX ``\\input``/``\\label``. Applying it twice changes nothing."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).lstrip(".") or "_"


@dataclass
class ReportTable:
    """``name`` is the file stem (``ppl``, ``passkey_delta``, ...); ``title`` is the caption."""

    name: str
    title: str
    columns: list[str]
    rows: list[Row]
    row_header: str = "Method"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = safe_stem(self.name)  # it names a file and a LaTeX label

    def groups(self) -> list[str | None]:
        return list(dict.fromkeys(row.group for row in self.rows))


def arrange(
    labels: Sequence[str], groups: Sequence[tuple[str, Sequence[str]]]
) -> list[tuple[str | None, list[str]]]:
    """Order row labels into the report's groups; labels no group names go last, under "Other".

    Without groups every label stays in run order in one unnamed group.
    """
    if not groups:
        return [(None, list(labels))]
    present, placed, arranged = set(labels), set(), []
    for name, members in groups:
        chosen = [m for m in members if m in present and m not in placed]
        placed.update(chosen)
        if chosen:
            arranged.append((name, chosen))
    rest = [label for label in labels if label not in placed]
    return arranged + ([("Other", rest)] if rest else [])


def bold_best(
    rows: Sequence[Sequence[Cell | None]], texts: Sequence[Sequence[str]], higher: bool, digits: int
) -> list[list[Entry]]:
    """Entries for one group: the best cell of each column (as printed) in bold."""
    entries = [[Entry(text) for text in row] for row in texts]
    for col in range(len(texts[0]) if texts else 0):
        for index in best_positions([row[col] for row in rows], higher, digits):
            entries[index][col] = Entry(texts[index][col], True)
    return entries


def printed_cell(text: str) -> Cell | None:
    """A number as a paper prints it, read back into a cell so the same bold-best rule applies."""
    status = {v: k for k, v in STATUS_TEXT.items()}.get(text)
    if status:
        return Cell(task="paper", method="", metric="", status=status)
    try:
        return Cell(task="paper", method="", metric="", value=float(text))
    except ValueError:
        return None
