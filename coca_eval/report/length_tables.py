"""Table 1/2 style tables: methods x lengths, best in bold, the paper's rows beside ours."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.lengths import format_length
from coca_eval.paper import paper_rows, paper_spec
from coca_eval.report.definition import ReportDefinition
from coca_eval.report.intervals import entry_text
from coca_eval.report.layout import Entry, ReportTable, Row, arrange, bold_best, printed_cell
from coca_eval.results import Cell
from coca_eval.tables import cell_grid
from coca_eval.taskspec import higher_is_better, spec_for


def table_title(task: str, metric: str) -> str:
    """The task's own title for its main metric, else ``<task> <metric> by length``."""
    spec = spec_for(task, metric)
    return (
        spec.report.table_title
        if spec.report.table_title and metric == spec.metric
        else (f"{task} {metric} by length")
    )


def table_groups(cells: Sequence[Cell]) -> dict[tuple, list[Cell]]:
    """Cells with a length, one table per (task, metric, dataset) in run order."""
    groups: dict[tuple, list[Cell]] = {}
    for cell in cells:
        if cell.length is not None:
            groups.setdefault((cell.task, cell.metric, cell.dataset), []).append(cell)
    return groups


def table_name(key: tuple, keys: Sequence[tuple]) -> str:
    """``ppl``, or ``ppl_pg19`` / ``ppl_nll`` when one task fills several tables."""
    task, metric, dataset = key
    same_task = [k for k in keys if k[0] == task]
    if len(same_task) == 1:
        return task
    return "_".join(
        str(p) for p in (task, metric if len({k[1] for k in same_task}) > 1 else None, dataset) if p
    )


def value_table(key: tuple, cells: Sequence[Cell], definition: ReportDefinition, name: str) -> ReportTable:
    """Rows = methods (grouped), columns = lengths; the best printed value per column and group in bold."""
    task, metric, dataset = key
    grid = cell_grid(cells)
    lengths = sorted(grid.columns)  # the paper's rows fill these; its other lengths no run has
    higher, digits = higher_is_better(task, metric), definition.digits
    rows = []
    for group, labels in arrange(grid.rows, definition.group_pairs()):
        found = [[grid.get(label, n) for n in lengths] for label in labels]
        texts = [
            [entry_text(c, digits, definition.intervals, definition.show_n) for c in row] for row in found
        ]
        for label, entries in zip(labels, bold_best(found, texts, higher, digits), strict=True):
            rows.append(Row(label, entries, group))
    title = table_title(task, metric) + (f" ({dataset})" if dataset else "")
    table = ReportTable(name, title, [format_length(n) for n in lengths], rows)
    _add_paper_rows(table, task, metric, lengths, definition)
    left_out = sorted(set(_paper_lengths(task, definition)) - set(lengths))
    if left_out:
        shown = ", ".join(format_length(n) for n in left_out)
        table.notes.append(f"The paper's columns at {shown} have no run here and are left out.")
    return table


def _paper_lengths(task: str, definition: ReportDefinition) -> list[int]:
    keys = [k for k in definition.paper if task in paper_spec(k).tasks]
    return [int(c) for k in keys for row in paper_rows(k, task) for c in row.values]


def _add_paper_rows(
    table: ReportTable, task: str, metric: str, lengths: Sequence[int], definition: ReportDefinition
) -> None:
    """The paper's own rows as extra groups; bold is marked within each of them, as the paper does."""
    for key in [k for k in definition.paper if task in paper_spec(k).tasks]:
        spec, rows = paper_spec(key), paper_rows(key, task)
        for group in dict.fromkeys(r.group for r in rows):
            members = [r for r in rows if r.group == group]
            name = f"Paper, {spec.caption.split(':')[0]}" + (f": {group}" if group else "")
            texts = [[r.values.get(str(n), "") for n in lengths] for r in members]
            cells = [[printed_cell(t) for t in row] for row in texts]
            plain = [[Entry(t) for t in row] for row in texts]
            entries = bold_best(cells, texts, higher_is_better(task, metric), 6) if spec.bold else plain
            table.rows.extend(Row(r.label, e, name) for r, e in zip(members, entries, strict=True))
