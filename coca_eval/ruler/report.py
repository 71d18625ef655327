"""How reports, the CLI and the gate read RULER cells: RULER's tables, the effective length both ways,
the protocol caption, a cell's interval and its samples.

Two tables, as RULER prints them: the summary (methods x lengths of the average over tasks, with the
effective length read both ways, see :mod:`coca_eval.generation.effective`) and, per method, tasks x lengths
with the average and its 95 % lower bound below.
"""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.generation.effective import (
    LengthScore,
    effective_length,
    effective_text,
    length_scores,
)
from coca_eval.generation.report import imported_note, summary_and_methods, task_cells
from coca_eval.lengths import format_length
from coca_eval.report.layout import Entry, ReportTable, Row
from coca_eval.results import Cell, Run
from coca_eval.ruler.params import RULER_THRESHOLD
from coca_eval.tables import cell_text

DIGITS = 1  # RULER prints scores with one decimal


def task_order(cells: Sequence[Cell]) -> list[str]:
    """The RULER tasks of ``cells`` in RULER's order (unknown names after, as they came)."""
    from coca_eval.ruler.tasks import RULER_TASKS

    present = list(dict.fromkeys(c.dataset for c in cells if c.dataset))
    known = [t for t in RULER_TASKS.names() if t in present]
    return known + [t for t in present if t not in known]


def _score_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.{DIGITS}f}"


def summary_table(cells: Sequence[Cell], threshold: float = RULER_THRESHOLD) -> ReportTable:
    """Methods x lengths of the average over the run's tasks, and the effective length both ways."""
    cells = task_cells(cells, "ruler")
    tasks, lengths = task_order(cells), sorted({c.length for c in cells})
    rows = []
    for method in dict.fromkeys(c.method for c in cells):
        scores = length_scores([c for c in cells if c.method == method], tasks)
        by_length = {s.length: s for s in scores}
        texts = [_score_text(by_length[n].average) if n in by_length else "" for n in lengths]
        ours = effective_text(effective_length(scores, threshold, bound=True), scores)
        ruler = effective_text(effective_length(scores, threshold), scores)
        rows.append(Row(method, [Entry(t) for t in (*texts, ruler, ours)]))
    columns = [format_length(n) for n in lengths] + ["Effective (RULER)", "Effective (95 % bound)"]
    notes = [effective_note(threshold, len(tasks))]
    return ReportTable("ruler", "RULER average score by length", columns, rows, notes=notes)


def effective_note(threshold: float, tasks: int) -> str:
    return (
        f"Average over {tasks} task{'s' * (tasks != 1)}. Effective length: the longest length up to which "
        f"every length reaches {threshold:g}, read from the average (RULER) and from its one-sided "
        "95 % lower bound (ours)."
    )


def task_table(cells: Sequence[Cell], method: str, threshold: float = RULER_THRESHOLD) -> ReportTable:
    """One method's tasks x lengths, then the average and its 95 % lower bound."""
    mine = task_cells(cells, "ruler", method)
    tasks, lengths = task_order(mine), sorted({c.length for c in mine})
    found = {(c.dataset, c.length): c for c in mine}
    rows = []
    for task in tasks:
        texts = [cell_text(found[task, n], DIGITS) if (task, n) in found else "" for n in lengths]
        rows.append(Row(task, [Entry(t) for t in texts]))
    scores = {s.length: s for s in length_scores(mine, tasks)}
    rows.append(Row("Average", [_bold_if(scores[n], threshold, bound=False) for n in lengths]))
    rows.append(Row("95 % lower bound", [_bold_if(scores[n], threshold, bound=True) for n in lengths]))
    ruler = effective_text(effective_length(list(scores.values()), threshold), list(scores.values()))
    ours = effective_text(effective_length(list(scores.values()), threshold, True), list(scores.values()))
    notes = [
        f"Effective length at {threshold:g}: {ruler} (RULER, the average), {ours} (ours, its 95 % lower "
        "bound). Bold: reaches the threshold."
    ]
    title = f"RULER scores of {method} by task and length"
    return ReportTable(f"ruler_{method}", title, [format_length(n) for n in lengths], rows, "Task", notes)


def _bold_if(score: LengthScore, threshold: float, bound: bool) -> Entry:
    value = score.lower if bound else score.average
    return Entry(_score_text(value), value is not None and value >= threshold)


def ruler_tables(cells: Sequence[Cell], definition=None, runs: Sequence[Run] = ()) -> list[ReportTable]:
    """The report's ``tables`` hook: the summary, then each method's task table, the effective
    lengths read at the runs' own ``--threshold``."""
    return summary_and_methods(
        task_cells(cells, "ruler"), lambda: run_threshold(runs), summary_table, task_table
    )


def run_threshold(runs: Sequence[Run]) -> float:
    """The ``--threshold`` the runs recorded (RULER's 85.6 for runs that recorded none); runs read at
    different thresholds are refused, since one table reads one effective length per method."""
    from coca_eval.errors import CocaEvalError

    recorded = {(r.config.get("effective_length") or {}).get("threshold", RULER_THRESHOLD) for r in runs}
    if len(recorded) > 1:
        shown = ", ".join(f"{t:g}" for t in sorted(recorded))
        raise CocaEvalError(
            f"the RULER runs were made with different --threshold ({shown}): report them apart"
        )
    return recorded.pop() if recorded else RULER_THRESHOLD


def console(run: Run, params=None):
    """The spec's ``console`` hook: the heading of a run made here (its N, sampling, seed, haystack,
    chat template, replayed folder) and its tables read at ``params.threshold`` (an imported run:
    no heading, RULER's threshold)."""
    from coca_eval.taskspec import ConsoleTables

    threshold = RULER_THRESHOLD if params is None else params.threshold
    heading = None if params is None else run_heading(run, params)
    return ConsoleTables(
        heading,
        lambda method: task_table(run.cells, method, threshold),
        lambda: summary_table(run.cells, threshold),
    )


def run_heading(run: Run, params) -> str:
    shown, replayed = params.identity(), run.config.get("replay_of")
    haystack = shown.get("haystack") if replayed else params.haystack  # the path, not its fingerprint
    return (
        f"[bold]RULER[/bold], {length_text(shown)}, {sampling_text(shown)}, seed {shown.get('seed')}, "
        f"haystack {haystack}, chat template {shown.get('chat_template')}"
        + (f", prompts replayed from {replayed['folder']}" if replayed else "")
    )


def sampling_text(params: dict) -> str:
    """``500 samples per task and length``, or under ``--samples auto`` the rule in RULER's points:
    ``up to 100 samples per task and length, stopping once the 95 % interval lies above or below 85.6``."""
    if params.get("samples") != "auto":
        return f"{params.get('samples')} samples per task and length"
    question = (
        f"is narrower than {params['target_width']:g} points"
        if params.get("target_width") is not None
        else f"lies above or below {params.get('threshold'):g}"
    )
    return (
        f"up to {params.get('max_samples')} samples per task and length, stopping once the 95 % "
        f"interval {question}"
    )


def length_text(params: dict) -> str:
    """What N counted: RULER's prompt + answer budget, or (runs made before the option, and
    ``--length-counts prompt``) the prompt alone."""
    if params.get("length_counts") == "prompt+answer":
        return "N = prompt + answer budget (RULER's)"
    if params.get("length_counts") == "prompt+answer+thought":
        return "N = prompt + answer budget + think budget"
    return "N = the prompt alone, the answer past it (not RULER's N)"


def protocol_line(run: Run) -> str:
    params = run.config.get("params") or {}
    tasks = params.get("tasks") or []
    auto = params.get("samples") == "auto"
    note = " (n: the samples a cell spent; brackets: its confidence sequence)" if auto else ""
    return (
        f"RULER: {len(tasks)} tasks, {length_text(params)}, {sampling_text(params)}{note}, haystack "
        f"{params.get('haystack')}, chat template {params.get('chat_template')}, seed {params.get('seed')}; "
        "greedy decoding up to each task's answer budget; scores x 100 (string_match_all / _part)."
        + imported_note(run)
    )


def finish_hook(run: Run, runner, methods, params, **_) -> None:
    """The task's ``finish`` hook: the run's ``--threshold`` and the effective lengths read at it go in
    its config (the threshold changes no cell, so it is not among the parameters). A shard's cells are
    partial: it records the threshold alone, for ``merge`` to read the merged cells at (see
    :func:`merged_hook`)."""
    from coca_eval.ruler.replay import record_replay

    record_effective_lengths(run, list(params.tasks), params.threshold)
    record_replay(run, params)


def merged_hook(run: Run) -> None:
    """The task's ``merged`` hook: the merged cells' effective lengths at the threshold the shards
    recorded (they agree: ``merge`` refuses shards whose settings differ)."""
    recorded = run.config.get("effective_length")
    threshold = recorded.get("threshold") if isinstance(recorded, dict) else None
    if threshold is None:  # shards of a version that recorded no threshold: RULER's bar, as the gate reads
        threshold = RULER_THRESHOLD
    tasks = (run.config.get("params") or {}).get("tasks") or None
    record_effective_lengths(run, tasks, threshold)


def record_effective_lengths(run: Run, tasks: Sequence[str] | None, threshold: float) -> None:
    """``config.effective_length``: the threshold, and per method the effective lengths (RULER's and
    the 95 % bound's) with the averages they were read from, once no cell is partial."""
    cells = [c for c in run.cells if c.status != "partial"]
    if len(cells) != len(run.cells):
        run.config["effective_length"] = {"threshold": threshold}
        return
    record = {}
    for method in dict.fromkeys(c.method for c in cells):
        scores = length_scores([c for c in cells if c.method == method], tasks)
        record[method] = {
            "ruler": effective_length(scores, threshold),
            "lower_bound": effective_length(scores, threshold, bound=True),
            "average": {str(s.length): s.average for s in scores},
            "lower": {str(s.length): s.lower for s in scores},
        }
    run.config["effective_length"] = {"threshold": threshold, "methods": record}
