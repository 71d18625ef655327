"""How reports, the CLI and the gate read HELMET cells: category averages as HELMET reports them, the
effective length per category, the protocol caption.

HELMET's headline numbers are category averages (Recall, RAG, Re-rank, ICL: the mean of the category's
task scores, ``custom_avgs`` in its ``collect_results.py``). HELMET has no effective length; ours per
category is RULER's reading (:mod:`coca_eval.generation.effective`) at a bar relative to the model itself:
``--share`` (85 %) of the category's average at the run's shortest length, since an NDCG and an exact
match have no common absolute bar. The 95 % lower bound must clear it, as for RULER. A category whose
lower bound at the shortest length is 0 sets no bar, and its effective length is undefined
(:mod:`coca_eval.generation.relative`).
"""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.generation.family import DIGITS, average_text
from coca_eval.generation.relative import (
    RelativeReading,
    merged_share,
    read_relative,
    record_relative,
    recorded_share,
)
from coca_eval.generation.report import summary_and_methods, task_cells
from coca_eval.helmet.params import SHORTEST_SHARE
from coca_eval.helmet.tasks import CATEGORIES, HELMET_TASKS, category_of
from coca_eval.lengths import format_length
from coca_eval.report.layout import Entry, ReportTable, Row
from coca_eval.results import Cell, Run
from coca_eval.tables import cell_text
from coca_eval.taskspec import ConsoleTables


def task_order(cells: Sequence[Cell]) -> list[str]:
    """The tasks of ``cells`` by category, in HELMET's order (unknown names last)."""
    present = list(dict.fromkeys(c.dataset for c in cells if c.dataset))
    known = [t for t in HELMET_TASKS.names() if t in present]
    ordered = [t for category in CATEGORIES for t in known if category_of(t) == category]
    return ordered + [t for t in present if t not in ordered]


def categories_of(cells: Sequence[Cell]) -> list[str]:
    present = {category_of(c.dataset) for c in cells}
    return [c for c in (*CATEGORIES, "other") if c in present]


def category_groups(cells: Sequence[Cell]) -> list[tuple[str, list[str]]]:
    """Each category present in one method's ``cells``, with its tasks in HELMET's order."""
    order = task_order(cells)
    return [(category, [t for t in order if category_of(t) == category]) for category in categories_of(cells)]


def read_category(cells: Sequence[Cell], category: str, share: float = SHORTEST_SHARE) -> RelativeReading:
    """``cells`` (one method's) of ``category``, averaged per length over its tasks."""
    return read_relative(cells, dict(category_groups(cells)).get(category, []), share)


def summary_table(cells: Sequence[Cell], share: float = SHORTEST_SHARE) -> ReportTable:
    """Methods x categories: the category average at each length and the effective length."""
    cells = task_cells(cells, "helmet")
    lengths = sorted({c.length for c in cells})
    rows = []
    for method in dict.fromkeys(c.method for c in cells):
        mine = [c for c in cells if c.method == method]
        for category in categories_of(mine):
            reading = read_category(mine, category, share)
            by_length = {s.length: s.average for s in reading.scores}
            texts = [average_text(by_length.get(n)) for n in lengths]
            rows.append(Row(f"{method}: {category}", [Entry(t) for t in (*texts, reading.effective_text)]))
    columns = [format_length(n) for n in lengths] + ["Effective (95 % bound)"]
    notes = [effective_note(share)]
    return ReportTable(
        "helmet", "HELMET category averages by length", columns, rows, "Method: category", notes
    )


def effective_note(share: float) -> str:
    return (
        "Category average: the mean of its tasks' scores (HELMET's). Effective length: the longest length "
        f"up to which the category's one-sided 95 % lower bound reaches {share:g} % of its average at the "
        "shortest length (HELMET defines none; see docs/helmet.md); undefined where that length's lower "
        "bound is 0 (no bar: a share of 0 would pass every length)."
    )


def task_table(cells: Sequence[Cell], method: str, share: float = SHORTEST_SHARE) -> ReportTable:
    """One method's tasks x lengths, each category's tasks followed by its average."""
    mine = task_cells(cells, "helmet", method)
    lengths = sorted({c.length for c in mine})
    found = {(c.dataset, c.length): c for c in mine}
    rows = []
    for category in categories_of(mine):
        for task in (t for t in task_order(mine) if category_of(t) == category):
            texts = [cell_text(found[task, n], DIGITS) if (task, n) in found else "" for n in lengths]
            rows.append(Row(task, [Entry(t) for t in texts]))
        reading = read_category(mine, category, share)
        by_length = {s.length: s.average for s in reading.scores}
        averages = [Entry(average_text(by_length.get(n)), True) for n in lengths]
        rows.append(Row(f"{category} average", averages))
    title = f"HELMET scores of {method} by task and length"
    return ReportTable(f"helmet_{method}", title, [format_length(n) for n in lengths], rows, "Task")


def helmet_tables(cells: Sequence[Cell], definition=None, runs: Sequence[Run] = ()) -> list[ReportTable]:
    """The report's ``tables`` hook: the category summary, then each method's task table."""
    return summary_and_methods(
        task_cells(cells, "helmet"), lambda: run_share(runs), summary_table, task_table
    )


def run_share(runs: Sequence[Run]) -> float:
    """The ``--share`` the runs recorded; runs read at different shares are refused."""
    return recorded_share(runs, SHORTEST_SHARE, "HELMET")


PROTOCOL_CAPTIONS = {  # how the report names each --protocol; any other reads as HELMET's own
    "exact": "exact (prompt + answer budget = N in the model's tokens, whole units while they fit)",
    "helmet": "helmet (HELMET's units per length, its truncation)",
}


def protocol_line(run: Run) -> str:
    from coca_eval.generation.report import imported_note

    params = run.config.get("params") or {}
    what = PROTOCOL_CAPTIONS.get(params.get("protocol"), PROTOCOL_CAPTIONS["helmet"])
    tasks = len(params.get("tasks") or [])
    return (
        f"HELMET: {tasks} tasks, protocol {what}, {samples_text(params.get('samples'))}, "
        f"chat template {params.get('chat_template')}, seed {params.get('seed')}; "
        "greedy decoding up to each task's answer budget; scores x 100 (HELMET's metric per task)."
        + imported_note(run)
    )


def console(run: Run, params=None) -> ConsoleTables:
    """The spec's ``console`` hook: each method's tasks x lengths with category averages, then the
    category summary with the run's notes on answerless RAG questions (an imported run: no heading,
    the default share)."""
    share = SHORTEST_SHARE if params is None else params.share
    heading = None
    if params is not None:
        heading = (
            f"[bold]HELMET[/bold], protocol {params.protocol}, N = prompt + answer budget, "
            f"{samples_text(params.samples)}, seed {params.seed}, chat template {params.chat_template}"
        )
    return ConsoleTables(
        heading,
        lambda method: task_table(run.cells, method, share),
        lambda: _with_notes(summary_table(run.cells, share), answerless_notes(run)),
    )


def _with_notes(table: ReportTable, notes: list[str]) -> ReportTable:
    """The summary with the run's own notes after the table's (printed once, under it)."""
    table.notes = [*table.notes, *notes]
    return table


def samples_text(samples) -> str:
    if samples == "helmet":
        return "HELMET's sample count per task and length (100; ICL 500)"
    if samples == "auto":
        return "samples in rounds until each cell's interval is narrow enough"
    return f"{samples} samples per task and length"


def finish_hook(run: Run, runner, methods, params, **_) -> None:
    """The run's ``--share`` and each method's effective length per category go in its config, and so
    does, per RAG task, how many of its questions no passage answers (``rag_answerless``)."""
    from coca_eval.helmet.prompts import Sources, answerless_rows

    record_relative(run, "helmet", params.share, category_groups)
    sources = Sources(params.data, params.seed, params.task_samples)
    tasks = [HELMET_TASKS.get(t) for t in params.tasks]
    found = answerless_rows(tasks, params.protocol, params.lengths, sources)
    if found:
        run.config["rag_answerless"] = found


def answerless_notes(run: Run) -> list[str]:
    """One sentence per RAG task whose questions include some no passage answers (the run's
    ``rag_answerless``); none where every question has its answer in a passage."""
    notes = []
    for task, files in (run.config.get("rag_answerless") or {}).items():
        counts = [
            f"{f['answerless']} of {f['questions']} (k = {f['passages']})" for f in files if f["answerless"]
        ]
        if counts:
            notes.append(
                f"{task}: {', '.join(counts)} questions have no passage holding an answer (every passage "
                "empty, or none gold); the model can answer those only from what it knows."
            )
    return notes


def merged_hook(run: Run) -> None:
    record_relative(run, "helmet", merged_share(run, SHORTEST_SHARE), category_groups)


def plot_hook(cells: Sequence[Cell], context) -> list:
    """The report's plots: each task's score against length, then where the answering unit sat: depth
    x length heat maps of the samples that recorded a depth (the gold pair, passage, or needles)."""
    from coca_eval.generation.heatmaps import depth_heatmaps
    from coca_eval.report.plots import default_plots

    plots = default_plots(cells, context)
    if context.source is None:
        plots += depth_heatmaps(cells, context.out_dir, context.definition.depth_bins, "helmet")
    return plots
