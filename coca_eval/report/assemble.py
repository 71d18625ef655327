"""Which tables a report holds: one per task/metric/dataset of length cells (plus its delta table), the
own tables of tasks whose spec lays them out (Table 5 for OpenCompass), and any requested paper table
that has no run table to sit beside."""

from __future__ import annotations

from coca_eval.lengths import format_length
from coca_eval.paper import paper_rows, paper_spec
from coca_eval.report.definition import ReportDefinition
from coca_eval.report.delta_tables import check_delta_rows, delta_table, paired_delta_table
from coca_eval.report.layout import Entry, ReportTable, Row, bold_best, printed_cell
from coca_eval.report.length_tables import table_groups, table_name, value_table
from coca_eval.report.runs import RunSet
from coca_eval.results import Cell
from coca_eval.taskspec import TASKS, higher_is_better, spec_for


def make_tables(runs: RunSet, definition: ReportDefinition) -> list[ReportTable]:
    own_layout = [t for t in task_order(runs.cells) if spec_for(t).report.tables is not None]
    by_length = [c for c in runs.cells if c.task not in own_layout]
    check_delta_rows(by_length, definition)
    keyed = table_groups(by_length)
    tables = []
    for key, cells in keyed.items():
        name = table_name(key, list(keyed))
        table = value_table(key, cells, definition, name)
        table.notes = [*_notes(runs, key[0], definition), *table.notes]
        tables.append(table)
        deltas = (delta_table(key, cells, definition, name), paired_delta_table(key, cells, definition, name))
        tables += [t for t in deltas if t is not None]
    for task in own_layout:
        own_runs = [run for _, run in runs.runs if run.config.get("task") == task]
        own_cells = [c for c in runs.cells if c.task == task]
        own_tables = spec_for(task).report.tables(own_cells, definition, own_runs)
        if own_tables:  # how the numbers were made, under the task's first table (after its own notes)
            own_tables[0].notes = [*own_tables[0].notes, *runs.protocol_lines(task)]
        tables += own_tables
    present = {key[0] for key in keyed} | set(own_layout)
    tables += [standalone_paper_table(k) for k in definition.paper if not set(paper_spec(k).tasks) & present]
    return tables


def standalone_paper_table(key: str) -> ReportTable:
    """A paper table on its own, in its own layout (used when no run table matches its task)."""
    spec = paper_spec(key)
    rows = [row for task in (spec.tasks if spec.task_column else (None,)) for row in _paper_rows(key, task)]
    headers = [format_length(int(c)) if c.isdigit() else c for c in paper_rows(key)[0].values]
    row_header = "Dataset" if spec.label == ("dataset",) else spec.label[0].capitalize()
    return ReportTable(f"paper_{key.replace('-', '_')}", spec.caption, headers, rows, row_header)


def _paper_rows(key: str, task: str | None) -> list[Row]:
    """One task's rows, best per column in bold within each group; a group holding only a row of its
    own name (Table 5's Total) is shown ungrouped."""
    spec, found = paper_spec(key), paper_rows(key, task)
    shown = task or next(iter(spec.tasks), None)
    higher = shown is not None and higher_is_better(shown, spec_for(shown).metric)
    rows = []
    for group in dict.fromkeys(r.group for r in found):
        members = [r for r in found if r.group == group]
        texts = [list(r.values.values()) for r in members]
        cells = [[printed_cell(t) for t in row] for row in texts]
        entries = bold_best(cells, texts, higher, 6) if spec.bold else [[Entry(t) for t in r] for r in texts]
        name = " / ".join(p for p in (task, group) if p) or None
        if len(members) == 1 and members[0].label == group:
            name = None
        rows += [Row(r.label, e, name) for r, e in zip(members, entries, strict=True)]
    return rows


def paper_cells(key: str, task: str) -> list[Cell]:
    """A paper table's printed numbers as cells of ``task``, so they can be drawn like a run's.
    Rows of different groups may share a label (one per NTK factor), so the group joins the label."""
    cells, rows = [], paper_rows(key, task)
    clash = len({row.label for row in rows}) < len(rows)
    for row in rows:
        label = f"{row.label} ({row.group})" if clash and row.group else row.label
        for column, text in row.values.items():
            cell = printed_cell(text) if column.isdigit() else None
            if cell is not None:
                update = {
                    "task": task,
                    "method": label,
                    "metric": spec_for(task).metric,
                    "length": int(column),
                }
                cells.append(cell.model_copy(update=update))
    return cells


def task_order(cells) -> list[str]:
    """The tasks present, registered ones in registration order (stable report layout), then others."""
    present = set(c.task for c in cells)
    known = [name for name in TASKS.names() if name in present]
    return known + sorted(present - set(known))


def _notes(runs: RunSet, task: str, definition: ReportDefinition) -> list[str]:
    notes = runs.protocol_lines(task)
    hooks = spec_for(task).report
    if definition.intervals and hooks.interval is not None and hooks.interval_note:
        notes.append(hooks.interval_note)
    counted = [spec_for(t).report.units_note for t in task_order(runs.cells)]
    if definition.show_n and any(counted):
        notes.append(f"n: {', '.join(note for note in counted if note)}.")
    return notes
