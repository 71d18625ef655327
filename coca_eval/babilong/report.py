"""How reports, the CLI and the gate read BABILong cells: tasks x lengths with the average over tasks,
and the effective length: the longest length up to which the average's one-sided 95 % lower bound
reaches ``--share`` (85 %) of the average at the run's shortest length (BABILong reads 85 % of its
0k score, the facts without noise; here the shortest length run stands for it). A shortest length whose
lower bound is 0 sets no bar, and the effective length is undefined
(:mod:`coca_eval.generation.relative`)."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.babilong.params import SHORTEST_SHARE
from coca_eval.generation.effective import length_scores
from coca_eval.generation.family import DIGITS, average_text, run_heading
from coca_eval.generation.relative import (
    RelativeReading,
    merged_share,
    read_relative,
    record_relative,
    recorded_share,
    relative_length_checks,
)
from coca_eval.generation.report import summary_and_methods, task_cells
from coca_eval.lengths import format_length
from coca_eval.report.layout import Entry, ReportTable, Row
from coca_eval.results import Cell, Run
from coca_eval.tables import cell_text
from coca_eval.taskspec import ConsoleTables


def task_order(cells: Sequence[Cell]) -> list[str]:
    present = {c.dataset for c in cells if c.dataset}
    return sorted(present, key=lambda name: int(name[2:]) if name[2:].isdigit() else 99)


def whole(cells: Sequence[Cell]) -> list[tuple[str, list[str]]]:
    """BABILong's effective length reads one group: every task of the run."""
    return [("", task_order(cells))]


def reading(cells: Sequence[Cell], share: float) -> RelativeReading:
    """One method's averages per length, the bar and the effective length (bound)."""
    return read_relative(cells, task_order(cells), share)


def summary_table(cells: Sequence[Cell], share: float = SHORTEST_SHARE) -> ReportTable:
    cells = task_cells(cells, "babilong")
    lengths = sorted({c.length for c in cells})
    rows = []
    for method in dict.fromkeys(c.method for c in cells):
        read = reading([c for c in cells if c.method == method], share)
        by_length = {s.length: s.average for s in read.scores}
        entries = [Entry(average_text(by_length.get(n))) for n in lengths] + [Entry(read.effective_text)]
        rows.append(Row(method, entries))
    columns = [format_length(n) for n in lengths] + ["Effective (95 % bound)"]
    note = (
        f"Average over tasks. Effective length: the longest length up to which the average's one-sided 95 % "
        f"lower bound reaches {share:g} % of the average at the shortest length (BABILong: of 0k); "
        "undefined where that length's lower bound is 0 (no bar: a share of 0 would pass every length)."
    )
    return ReportTable("babilong", "BABILong average accuracy by length", columns, rows, notes=[note])


def task_table(cells: Sequence[Cell], method: str) -> ReportTable:
    mine = task_cells(cells, "babilong", method)
    lengths = sorted({c.length for c in mine})
    found = {(c.dataset, c.length): c for c in mine}
    rows = [
        Row(task, [Entry(cell_text(found[task, n], DIGITS) if (task, n) in found else "") for n in lengths])
        for task in task_order(mine)
    ]
    averages = {s.length: s.average for s in length_scores(mine, task_order(mine))}
    rows.append(Row("Average", [Entry(average_text(averages.get(n)), True) for n in lengths]))
    title = f"BABILong accuracy of {method} by task and length"
    return ReportTable(f"babilong_{method}", title, [format_length(n) for n in lengths], rows, "Task")


def babilong_tables(cells: Sequence[Cell], definition=None, runs: Sequence[Run] = ()) -> list[ReportTable]:
    """The report's ``tables`` hook: the summary at the runs' share, then each method's task table."""
    return summary_and_methods(
        task_cells(cells, "babilong"),
        lambda: recorded_share(runs, SHORTEST_SHARE, "BABILong"),
        summary_table,
        lambda mine, method, _share: task_table(mine, method),  # its averages need no bar
    )


SOURCE_CAPTIONS = {  # how the report names each --source; a run without one read BABILong's samples
    "generate": "generate (bAbI facts spread through book text, prompt + answer budget = N)",
    "babilong": "babilong (BABILong's prepared samples, tokenised whole)",
}


def protocol_line(run: Run) -> str:
    params = run.config.get("params") or {}
    how = SOURCE_CAPTIONS.get(params.get("source"), SOURCE_CAPTIONS["babilong"])
    parts = ", ".join(params.get("prompt_parts") or []) or "none"
    return (
        f"BABILong: {len(params.get('tasks') or [])} tasks, source {how}, prompt parts {parts}, "
        f"{params.get('samples')} samples per task and length, chat template {params.get('chat_template')}, "
        f"seed {params.get('seed')}; greedy decoding up to 20 tokens; accuracy x 100 (BABILong's check)."
    )


def finish_hook(run: Run, runner, methods, params, **_) -> None:
    record_relative(run, "babilong", params.share, whole)


def merged_hook(run: Run) -> None:
    record_relative(run, "babilong", merged_share(run, SHORTEST_SHARE), whole)


def effective_length_checks(base: Run, cand: Run, options) -> list:
    """The gate's run check: the candidate's effective length at the baseline's bar (85 % of the
    baseline's shortest length) must not be shorter than the baseline's."""
    return relative_length_checks(
        base, cand, "babilong", recorded_share([base], SHORTEST_SHARE, "BABILong"), whole
    )


def console(run: Run, params) -> ConsoleTables:
    """The spec's ``console`` hook: each method's tasks x lengths with the average, then the summary
    with the effective length."""
    return ConsoleTables(
        run_heading("BABILong", params),
        lambda method: task_table(run.cells, method),
        lambda: summary_table(run.cells, params.share),
    )


def cell_contradiction(cell) -> str | None:
    """Why a finished BABILong cell contradicts its own samples, or None."""
    from coca_eval.babilong.scoring import score_record
    from coca_eval.babilong.task import BabilongTask
    from coca_eval.generation.records import scored_contradiction

    return scored_contradiction(cell, BabilongTask(cell.dataset or "", 20), score_record)
