"""How reports, the CLI and the gate read RULER cells: RULER's tables, the effective length both ways,
the protocol caption, a cell's interval and its samples.

Two tables, as RULER prints them: the summary (methods x lengths of the average over tasks, with the
effective length read both ways, see :mod:`coca_eval.ruler.effective`) and, per method, tasks x lengths
with the average and its 95 % lower bound below.
"""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.lengths import format_length
from coca_eval.report.layout import Entry, ReportTable, Row
from coca_eval.results import Cell, Run, units_by_key
from coca_eval.ruler.effective import (
    LengthScore,
    effective_length,
    effective_text,
    length_scores,
    score_interval,
)
from coca_eval.ruler.params import RULER_THRESHOLD
from coca_eval.tables import cell_text

DIGITS = 1  # RULER prints scores with one decimal


def ruler_cells(cells: Sequence[Cell]) -> list[Cell]:
    return [c for c in cells if c.task == "ruler"]


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
    cells = ruler_cells(cells)
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
    mine = [c for c in ruler_cells(cells) if c.method == method]
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
    cells = ruler_cells(cells)
    if not cells:
        return []
    threshold = run_threshold(runs)
    methods = dict.fromkeys(c.method for c in cells)
    return [summary_table(cells, threshold), *(task_table(cells, m, threshold) for m in methods)]


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


def imported_note(run: Run) -> str:
    """Where an imported run's samples came from (``coca-eval import``), or a replay's prompts
    (``ruler --replay``), or nothing."""
    for key, what in (("source", "Imported from"), ("replay_of", "Prompts replayed from")):
        source = run.config.get(key) or {}
        if isinstance(source, dict) and "harness" in source:
            version = f" {source['version']}" if source.get("version") else ""
            return f" {what} {source['harness']}{version} ({source.get('results')})."
    return ""


def interval(cell: Cell) -> tuple[float, float] | None:
    """The 95 % interval the cell recorded, else one from its value and n."""
    if "interval95" in cell.detail:
        low, high = cell.detail["interval95"]
        return float(low), float(high)
    return score_interval(cell.value, cell.n) if cell.n else None


def unit_ids(cell: Cell) -> dict[int, tuple]:
    """Sample index -> its references and, where the run kept it, its prompt's sha256 (an imported
    lm-eval run and its replay do): two runs' cells must hold the very same samples to be compared. Read
    on every load, it refuses an index held twice and a sample whose references are all empty after
    normalisation (it scored full marks whatever the output: :mod:`coca_eval.references`)."""
    from coca_eval.references import says_nothing
    from coca_eval.ruler.records import records_of

    records = records_of(cell.detail)
    blank = next((s for s in records if says_nothing(s.answers)), None)
    if blank is not None:
        raise ValueError(
            f"sample {blank.index} has no reference left after normalisation ({blank.answers!r})"
        )
    return units_by_key(
        (s.index, (tuple(s.answers), (s.model_extra or {}).get("prompt_sha256"))) for s in records
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
