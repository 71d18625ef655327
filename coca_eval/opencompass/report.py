"""Table 5 style: benchmark datasets (grouped into the paper's categories) x methods, with a Total row.

OpenCompass names a dataset several ways (``SuperGLUE_COPA_ppl``, ``COPA``, ``csl-dev``); a cell's
``dataset`` is matched to the paper's name after stripping the suite prefix, the mode and split
suffixes, and anything that is not a letter or digit. Datasets outside the paper's list go to "Other".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.paper import paper_rows
from coca_eval.report.definition import ReportDefinition
from coca_eval.report.layout import Entry, ReportTable, Row
from coca_eval.results import Cell, higher_is_better
from coca_eval.tables import best_positions, cell_grid, cell_text

CATEGORIES: dict[str, tuple[str, ...]] = {
    "Reasoning": ("COPA", "AX_b", "AX_g", "RTE", "OCNLI", "CMNLI"),
    "Understanding": ("C3", "CSL", "EPRSTMT"),
    "Knowledge": ("BoolQ",),
    "Language": ("WiC", "WSC", "CHID", "AFQMC"),
    "Examination": ("MMLU", "CMMLU", "C-Eval"),
}
_AFFIXES = re.compile(r"^(superglue|fewclue|clue)_|(_ppl|_gen|[-_](dev|test|val|public))+$")


def canonical(name: str) -> str:
    """``SuperGLUE_AX_b_ppl`` -> ``axb``; ``C-Eval``, ``ceval`` -> ``ceval``."""
    return re.sub(r"[^a-z0-9]", "", _AFFIXES.sub("", name.strip().lower()))


_DISPLAY = {canonical(d): (d, category) for category, names in CATEGORIES.items() for d in names}


def display(name: str) -> tuple[str, str]:
    """(the paper's name, its category) for a dataset; unknown ones keep their name, under "Other"."""
    return _DISPLAY.get(canonical(name), (name, "Other"))


def opencompass_tables(cells: Sequence[Cell], definition: ReportDefinition, runs=()) -> list[ReportTable]:
    metrics = list(dict.fromkeys(c.metric for c in cells if c.task == "opencompass"))
    tables = []
    for metric in metrics:
        chosen = [
            c.model_copy(update={"dataset": display(c.dataset or "")[0]})
            for c in cells
            if c.task == "opencompass" and c.metric == metric
        ]
        name = "opencompass" if len(metrics) == 1 else f"opencompass_{metric}"
        tables.append(_table(chosen, metric, definition, name))
    return tables


def _table(cells: Sequence[Cell], metric: str, definition: ReportDefinition, name: str) -> ReportTable:
    grid = cell_grid(cells, row="dataset", column="method", sort=False)
    paper = _paper_values(definition)
    methods = list(grid.columns) + [f"{m} (paper)" for m in paper]
    datasets = _ordered(list(grid.rows) + [d for values in paper.values() for d in values])
    found = {(d, m): grid.get(d, m) for d in datasets for m in grid.columns}
    rows = []
    for dataset in datasets:
        ours = [found[dataset, m] for m in grid.columns]
        texts = [cell_text(c, 1) if c else "" for c in ours] + [paper[m].get(dataset, "") for m in paper]
        best = best_positions(ours, higher_is_better(metric), 1)
        entries = [Entry(t, i in best) for i, t in enumerate(texts)]
        rows.append(Row(dataset, entries, display(dataset)[1]))
    totals = [_total([found[d, m] for d in datasets]) for m in grid.columns] + [
        paper[m].get("Total", "") for m in paper
    ]
    rows.append(Row("Total", [Entry(t) for t in totals], None))
    title = f"OpenCompass ({metric}) by dataset"
    return ReportTable(name, title, methods, rows, row_header="Dataset")


def _ordered(datasets: Sequence[str]) -> list[str]:
    """The paper's category order and dataset order first, then anything else as it came."""
    known = [d for names in CATEGORIES.values() for d in names]
    unique = [d for d in dict.fromkeys(datasets) if d != "Total"]
    return sorted(unique, key=lambda d: (known.index(d) if d in known else len(known), unique.index(d)))


def _total(column: Sequence[Cell | None]) -> str:
    """The paper's Total is the plain sum of the dataset scores; a sum over fewer datasets than the
    table shows would mislead, so then there is none."""
    if not column or any(c is None or c.status != "ok" for c in column):
        return ""
    return f"{sum(c.value for c in column):.1f}"


def _paper_values(definition: ReportDefinition) -> dict[str, dict[str, str]]:
    """Method -> dataset -> printed score, from the paper's Table 5 when the report asks for it."""
    if "table5" not in definition.paper:
        return {}
    values: dict[str, dict[str, str]] = {}
    for row in paper_rows("table5"):
        for method, text in row.values.items():
            values.setdefault(method, {})[display(row.label)[0]] = text
    return values
