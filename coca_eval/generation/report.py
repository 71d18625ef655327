"""What the report and gate read of any generation family's cells: a cell's interval, its samples'
identities, the note an imported or replayed run carries, and the note on thoughts the think budget
cut (beside the score, since a cut thought's answer is forced and scores what it scores)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coca_eval.generation.effective import score_interval
from coca_eval.results import Cell, Run, units_by_key


def imported_note(run: Run) -> str:
    """Where an imported run's samples came from (``coca-eval import``), or a replay's prompts
    (``ruler --replay``), or nothing."""
    for key, what in (("source", "Imported from"), ("replay_of", "Prompts replayed from")):
        source = run.config.get(key) or {}
        if isinstance(source, dict) and "harness" in source:
            version = f" {source['version']}" if source.get("version") else ""
            return f" {what} {source['harness']}{version} ({source.get('results')})."
    return ""


def task_cells(cells: Sequence[Cell], task: str, method: str | None = None) -> list[Cell]:
    """The cells of one family's ``task`` (a report holds every task's runs), of ``method`` alone where
    given (a per-method table)."""
    return [c for c in cells if c.task == task and (method is None or c.method == method)]


def summary_and_methods(cells: Sequence[Cell], bar: Callable[[], float], summary_table, task_table) -> list:
    """A family's report tables: ``summary_table(cells, bar)``, then ``task_table(cells, method, bar)``
    for each method in the order the cells name them; none without cells, and ``bar`` (the share or
    threshold the runs recorded, refused where they differ) is then not read."""
    if not cells:
        return []
    value = bar()
    methods = dict.fromkeys(c.method for c in cells)
    return [summary_table(cells, value), *(task_table(cells, m, value) for m in methods)]


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
    from coca_eval.generation.records import records_of
    from coca_eval.references import says_nothing

    records = records_of(cell.detail)
    blank = next((s for s in records if says_nothing(s.answers)), None)
    if blank is not None:
        raise ValueError(
            f"sample {blank.index} has no reference left after normalisation ({blank.answers!r})"
        )
    return units_by_key(
        (s.index, (tuple(s.answers), (s.model_extra or {}).get("prompt_sha256"))) for s in records
    )


def thought_notes(cells) -> list[str]:
    """One line per method whose cells decoded thoughts apart: the think budget and, per cell, the
    share of samples whose thought the budget closed; nothing for a run without thoughts."""
    noted = [c for c in cells if "cut_in_thought" in c.detail]
    lines = []
    for method in dict.fromkeys(c.method for c in noted):
        mine = [c for c in noted if c.method == method]
        budgets = "/".join(str(b) for b in sorted({c.detail.get("think_budget") for c in mine}, key=str))
        shares = ", ".join(f"{_where(c)} {100 * c.detail['cut_in_thought']:.0f} %" for c in mine)
        lines.append(f"{method}: think budget {budgets} tokens (not in N); samples cut in thought: {shares}.")
    return lines


def _where(cell) -> str:
    from coca_eval.lengths import format_length

    return f"{cell.dataset + ' ' if cell.dataset else ''}{format_length(cell.length)}"
