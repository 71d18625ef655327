"""Several results files as one set of cells, plus what their configs say about each method.

A paper table is usually assembled from several invocations (one per model, or ppl and passkey apart),
so the report merges runs. The same cell twice with different numbers is refused: silently picking one
would print a number nobody can trace back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import trained_context_of
from coca_eval.results import Cell, Run, require_complete
from coca_eval.taskspec import load_checked_run, spec_for


@dataclass
class RunSet:
    cells: list[Cell]
    runs: list[tuple[Path, Run]]

    def method_source(self, label: str) -> tuple[dict, dict]:
        """The ``config.methods`` entry that produced this label and its run's config (empty if none)."""
        for _, run in self.runs:
            for entry in run.config.get("methods") or []:
                if entry.get("label") == label:
                    return entry, run.config
        return {}, {}

    def trained_context(self, label: str) -> int | None:
        """The context the method's model was trained on: recorded in the run, else known from the
        model preset or the local checkpoint's ``config.json``."""
        entry, config = self.method_source(label)
        recorded = entry.get("trained_context") or config.get("trained_context")
        if recorded:
            return int(recorded)
        return trained_context_of(entry["model"]) if entry.get("model") else None

    def protocol_lines(self, task: str) -> list[str]:
        """One sentence per run of ``task`` saying how its numbers were made (shown under its tables)."""
        protocol = spec_for(task).report.protocol
        if protocol is None:
            return []
        lines = [protocol(run) for _, run in self.runs if run.config.get("task") == task]
        return list(dict.fromkeys(line for line in lines if line))


def merge_runs(paths: Sequence[Path], relabel: dict[str, str] | None = None) -> RunSet:
    """Load, relabel (display names from a report definition) and merge; conflicting duplicates fail."""
    if not paths:
        raise CocaEvalError("give at least one results file")
    relabel = relabel or {}
    runs = [(Path(p), require_complete(load_checked_run(Path(p)), Path(p))) for p in paths]
    merged: dict[tuple, tuple[Path, Cell]] = {}
    for path, run in runs:
        for cell in run.cells:
            cell = cell.model_copy(update={"method": relabel.get(cell.method, cell.method)})
            key = (cell.task, cell.metric, cell.dataset, cell.length, cell.method)
            if key in merged and (merged[key][1].value, merged[key][1].status) != (cell.value, cell.status):
                raise CocaEvalError(
                    f"{cell.task} {cell.method!r} @ {cell.length or cell.dataset} differs between "
                    f"{merged[key][0]} and {path}; report one of them"
                )
            merged.setdefault(key, (path, cell))
    return RunSet([cell for _, cell in merged.values()], runs)
