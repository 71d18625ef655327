"""Two runs, cell by cell, each pair marked paired or not and why (``report --side-by-side``).

The gate refuses to compare runs that hold different samples, and must. A reader still wants to see
two harnesses' numbers next to each other (lm-eval's RULER port and ours draw different needles), so
this view shows every cell of both runs and says, per pair, whether the gate would pair it sample by
sample, or why not, in the gate's own words.
"""

from __future__ import annotations

import pandas as pd

from coca_eval.gate.protocol import IncomparableRuns, cell_key, check_protocol, check_units, pair_methods
from coca_eval.results import Cell, CellPair, Run

PAIRED = "paired"
COLUMNS = ["task", "dataset", "length", "metric", "baseline", "candidate", "delta", "n", "pairing"]


def side_by_side(base: Run, cand: Run) -> pd.DataFrame:
    """A row per cell of either run: both values, the difference where both are numbers, the samples
    each holds, and ``paired`` or ``unpaired: <why>``."""
    protocol = _refusal(lambda: check_protocol(base, cand))
    rows = []
    for label_b, label_c in _method_pairs(base, cand):
        cells_b = {cell_key(c): c for c in base.cells if c.method == label_b}
        cells_c = {cell_key(c): c for c in cand.cells if c.method == label_c}
        for key in list(cells_b) + [k for k in cells_c if k not in cells_b]:
            rows.append(_row(label_b, label_c, cells_b.get(key), cells_c.get(key), protocol))
    return pd.DataFrame(rows, columns=["method", *COLUMNS])


def _row(label_b: str, label_c: str, cell_b: Cell | None, cell_c: Cell | None, protocol: str | None) -> dict:
    cell = cell_b or cell_c
    method = label_b if label_b == label_c else f"{label_b} | {label_c}"
    both = cell_b is not None and cell_c is not None
    numbers = both and cell_b.status == "ok" and cell_c.status == "ok"
    if not both:
        pairing = "unpaired: only in the " + ("baseline" if cell_c is None else "candidate")
    elif protocol is not None:
        pairing = f"unpaired: {protocol}"
    else:
        why = _refusal(lambda: check_units(CellPair(cell_b, cell_c)))
        pairing = PAIRED if why is None else f"unpaired: {why}"
    return {
        "method": method,
        "task": cell.task,
        "dataset": cell.dataset,
        "length": cell.length,
        "metric": cell.metric,
        "baseline": _shown(cell_b),
        "candidate": _shown(cell_c),
        "delta": cell_c.value - cell_b.value if numbers else None,
        "n": f"{_count(cell_b)} | {_count(cell_c)}",
        "pairing": pairing,
    }


def _method_pairs(base: Run, cand: Run) -> list[tuple[str, str]]:
    """The gate's pairing of methods; where it refuses, same labels pair and the others stand alone."""
    try:
        return pair_methods(base, cand)
    except IncomparableRuns:
        labels_b = list(dict.fromkeys(c.method for c in base.cells))
        labels_c = list(dict.fromkeys(c.method for c in cand.cells))
        same = [(m, m) for m in labels_b if m in labels_c]
        return same + [(m, m) for m in labels_b + labels_c if m not in {s for s, _ in same}]


def _refusal(check) -> str | None:
    try:
        check()
    except IncomparableRuns as refused:
        return str(refused).removeprefix("incomparable runs: ")
    return None


def _shown(cell: Cell | None) -> float | str | None:
    if cell is None:
        return None
    return cell.value if cell.status == "ok" else cell.status


def _count(cell: Cell | None) -> str:
    return "-" if cell is None or cell.n is None else str(cell.n)
