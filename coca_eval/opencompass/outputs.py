"""Reading what an OpenCompass run left in its work directory: results, predictions, task logs.

OpenCompass exits 0 even when every task failed, so a run is judged by its files: each expected
``results/<model>/<dataset>.json`` must exist, and when one does not, the task's log says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.datasets import BenchmarkDataset
from coca_eval.results import Cell

_ERROR_LINE = re.compile(r"(Error|Exception|error:|Traceback|Killed)")


def latest_output(work_dir: Path) -> Path:
    """The newest ``<YYYYmmdd_HHMMSS>`` directory OpenCompass made under ``work_dir``."""
    stamps = sorted(p for p in Path(work_dir).glob("[0-9]" * 8 + "_" + "[0-9]" * 6) if p.is_dir())
    if not stamps:
        raise CocaEvalError(f"OpenCompass wrote no output under {work_dir}")
    return stamps[-1]


def expected_abbrs(dataset: BenchmarkDataset) -> list[str]:
    return [dataset.abbr_of(s) for s in dataset.subjects] if dataset.is_suite else list(dataset.abbrs)


def read_result(output: Path, model: str, abbr: str) -> dict | None:
    path = output / "results" / model / f"{abbr}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def count_predictions(output: Path, model: str, abbr: str) -> int | None:
    """Questions scored: entries of the prediction file (or of its shards ``<abbr>_0.json``, ...)."""
    directory = output / "predictions" / model
    shards = [directory / f"{abbr}.json"] + sorted(directory.glob(f"{abbr}_[0-9]*.json"))
    total, found = 0, False
    for shard in shards:
        try:
            total += len(json.loads(shard.read_text(encoding="utf-8")))
            found = True
        except (OSError, ValueError, TypeError):
            continue
    return total if found else None


def task_log(output: Path, model: str, abbr: str) -> Path | None:
    """The log of the task that should have written this result: one that names an error (inference
    first, then evaluation), else the first one found."""
    logs = [
        p
        for stage in ("infer", "eval")
        for p in sorted((output / "logs" / stage / model).glob(f"{abbr}*.out"))
    ]
    failing = [p for p in logs if _ERROR_LINE.search(_text(p))]
    return (failing or logs or [None])[0]


def log_reason(log: Path | None) -> str:
    """One line out of a task log: the last line that names an error, else its last line."""
    if log is None:
        return "no task log was written"
    lines = [line.strip() for line in _text(log).splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR_LINE.search(line) and not line.startswith("Traceback")]
    return (errors or lines or ["the task log is empty"])[-1][:300]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class Failure:
    dataset: str
    method: str
    reason: str
    log: Path | None

    def message(self) -> str:
        where = f" (log: {self.log})" if self.log else ""
        return f"OpenCompass task {self.dataset} for {self.method!r} failed: {self.reason}{where}"


def dataset_cell(
    output: Path, model: str, method: str, dataset: BenchmarkDataset
) -> tuple[Cell, Failure | None]:
    """Table 5's cell for one dataset: its accuracy, or for a suite the plain mean over its subjects
    (OpenCompass's ``naive_average``), with ``n`` the questions behind it."""
    base = dict(task="opencompass", method=method, metric="accuracy", dataset=dataset.name)
    scores, counts, subjects = [], [], {}
    for abbr in expected_abbrs(dataset):
        result = read_result(output, model, abbr)
        if result is None or not isinstance(result.get("accuracy"), (int, float)):
            log = task_log(output, model, abbr)
            failure = Failure(dataset.name, method, log_reason(log), log)
            detail = {"opencompass_abbr": abbr, "error": failure.reason, "log": str(log) if log else None}
            return Cell(**base, status="error", detail=detail), failure
        n = count_predictions(output, model, abbr)
        scores.append(float(result["accuracy"]))
        counts.append(n)
        subjects[abbr] = {"accuracy": float(result["accuracy"]), "n": n}
    n_total = None if None in counts else sum(counts)
    detail = {"opencompass_abbrs": list(subjects), "output": str(output)}
    if dataset.is_suite:
        detail["subjects"] = subjects
    return Cell(**base, value=fmean(scores), n=n_total, detail=detail), None


def collect_cells(
    output: Path, models: dict[str, str], datasets: Sequence[BenchmarkDataset]
) -> tuple[list[Cell], list[Failure]]:
    """Every (method, dataset) cell of a finished run, with the failures behind its error cells."""
    cells, failures = [], []
    for model, method in models.items():
        for dataset in datasets:
            cell, failure = dataset_cell(output, model, method, dataset)
            cells.append(cell)
            failures += [failure] if failure else []
    return cells, failures
