"""A results file as what a tracker or the Hub shows: a table per task (methods by length), every
sample's record, the report's plots as images, and the run's protocol and provenance as its config.

One view serves every destination, so W&B, Trackio and the Hub show the same numbers as ``report``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from coca_eval.lengths import format_length
from coca_eval.results import Cell, Run, require_complete

ID_COLUMNS = ["method", "dataset", "metric"]  # one table row; the lengths are its columns


@dataclass(frozen=True)
class RunExport:
    """A complete run read from ``path`` (a run with missing or partial cells is refused on read), and
    its ``name`` where it lands: the file's name without ``.json`` (or ``.json.gz``)."""

    path: Path
    run: Run
    name: str

    def tasks(self) -> list[str]:
        return list(dict.fromkeys(c.task for c in self.run.cells))

    def cells_frame(self) -> pd.DataFrame:
        """One row per cell: where it is, its value and status, how many units, its 95 % interval."""
        return pd.DataFrame([_cell_row(c) for c in self.run.cells])

    def task_tables(self) -> dict[str, pd.DataFrame]:
        """Per task, the table ``report`` prints: a row per method (and dataset, metric), a column per
        length (``1k``, ``2k``: the papers' headers); a failed cell shows its status, never a number."""
        frame = self.cells_frame()
        tables = {}
        for task in self.tasks():
            rows = frame[frame["task"] == task].copy()
            rows["shown"] = [_shown(v, s) for v, s in zip(rows["value"], rows["status"], strict=True)]
            if rows["length"].notna().any():
                lengths = sorted(int(n) for n in rows["length"].dropna().unique())
                rows["column"] = [format_length(int(n)) if pd.notna(n) else "-" for n in rows["length"]]
                order = [format_length(n) for n in lengths] + (["-"] if rows["length"].isna().any() else [])
            else:
                rows["column"], order = "value", ["value"]
            keys = rows[ID_COLUMNS].fillna("")
            table = rows.assign(**keys).pivot(index=ID_COLUMNS, columns="column", values="shown")
            tables[task] = table.reindex(columns=order).reset_index()
        return tables

    def samples(self) -> dict[str, list[dict]]:
        """Per task, every sample's record with the cell it belongs to (method, dataset, length)."""
        records: dict[str, list[dict]] = {}
        for cell in self.run.cells:
            for sample in unit_records(cell):
                where = {"method": cell.method, "dataset": cell.dataset, "length": cell.length}
                records.setdefault(cell.task, []).append({**where, "metric": cell.metric, **sample})
        return records

    def config(self) -> dict:
        """The run's protocol and provenance: its config (task, parameters, methods, weights'
        fingerprints, environment, or an import's source) with the version and checkout that made it."""
        made = {"schema": self.run.schema_, "created": self.run.created, "git": self.run.git}
        return {**self.run.config, "coca_eval": {"version": self.run.coca_eval_version, **made}}

    def draw_plots(self, out_dir: Path) -> list[tuple[str, Path]]:
        """The report's plots of this run (the same functions draw them): (caption, PNG) pairs."""
        from coca_eval.report.build import draw_plots
        from coca_eval.report.definition import ReportDefinition
        from coca_eval.report.runs import RunSet

        runs = RunSet(list(self.run.cells), [(self.path, self.run)])
        drawn = draw_plots(runs, ReportDefinition(), out_dir)
        return [(caption, out_dir / f"{s}.png") for s, caption in drawn if (out_dir / f"{s}.png").exists()]


def read_export(path: Path) -> RunExport:
    """The run at ``path``, its per-sample records checked by its task (as ``report`` reads it)."""
    from coca_eval.taskspec import load_checked_run

    path = Path(path)
    return RunExport(path, require_complete(load_checked_run(path), path), path.name.split(".json")[0])


def unit_records(cell: Cell) -> list[dict]:
    """A cell's per-unit records: its samples (generation tasks) or its documents (perplexity)."""
    return cell.detail.get("samples") or cell.detail.get("documents") or []


def _cell_row(cell: Cell) -> dict:
    interval = cell.detail.get("wilson95") or cell.detail.get("interval95") or [None, None]
    return {
        "task": cell.task,
        "method": cell.method,
        "dataset": cell.dataset,
        "length": cell.length,
        "metric": cell.metric,
        "value": cell.value,
        "status": cell.status,
        "n": cell.n,
        "low95": interval[0] if isinstance(interval, list | tuple) else None,
        "high95": interval[1] if isinstance(interval, list | tuple) else None,
    }


def _shown(value: float | None, status: str) -> float | str:
    return value if status == "ok" else status
