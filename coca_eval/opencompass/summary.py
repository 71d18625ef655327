"""An OpenCompass summary CSV (``dataset,version,metric,mode,<model>...``) as our cells.

A ``-`` in the summary means the task produced no result (it failed, or never ran). Such an entry
becomes an ``error`` cell: a zero would enter the Total and read as a real score.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.datasets import TABLE5
from coca_eval.results import Cell

HEAD = ("dataset", "version", "metric", "mode")
# Averages of accuracies are accuracies: they belong in the same Table 5 column as plain accuracy.
ACCURACY_METRICS = {"accuracy", "acc", "naive_average", "weighted_average", "correct_bpb-incorrect_bpb"}
_SUITE_PREFIXES = tuple(d.subject_prefix for d in TABLE5 if d.subject_prefix)
_SUITE_NAMES = {d.name.lower().replace("-", ""): d.name for d in TABLE5 if d.is_suite}
_KEPT = {abbr: d.name for d in TABLE5 for abbr in d.abbrs}


def read_summary(path: Path) -> list[dict[str, str]]:
    """The rows of a summary CSV, each a dict keyed by the header; a wrong header is a user error."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CocaEvalError(f"summary file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"cannot read summary file {path}: {exc}") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    if tuple(h.strip() for h in header[:4]) != HEAD or len(header) < 5:
        raise CocaEvalError(
            f"{path} is not an OpenCompass summary CSV (header must be {','.join(HEAD)},<model>...)"
        )
    return [dict(zip([h.strip() for h in header], row, strict=False)) for row in reader if row]


def summary_cells(path: Path, models: dict[str, str] | None = None) -> list[Cell]:
    """One cell per (dataset row, model column). ``models`` maps OpenCompass abbrs to method labels.

    Separator rows (``----- Exam -----``) are skipped, and so are a suite's per-subject rows when the
    summary also holds the suite's average (Table 5 shows the suite as one row), and the other splits
    of a Table 5 dataset (``csl_test`` beside ``csl_dev``), which would claim the same row.
    """
    rows = [r for r in read_summary(path) if not _is_separator(r)]
    suites = {_SUITE_NAMES.get(r["dataset"].strip().lower().replace("-", "")) for r in rows} - {None}
    columns = [c for c in rows[0] if c not in HEAD] if rows else []
    cells = []
    for row in rows:
        if (suites and row["dataset"].startswith(_SUITE_PREFIXES)) or _other_split(row["dataset"]):
            continue
        for column in columns:
            cells.append(summary_cell(row, column, (models or {}).get(column, column)))
    return cells


def summary_cell(row: dict[str, str], column: str, method: str) -> Cell:
    dataset = row["dataset"].strip()
    name = _KEPT.get(dataset) or _SUITE_NAMES.get(dataset.lower().replace("-", ""))
    metric = row["metric"].strip()
    detail = {
        "opencompass_dataset": dataset,
        "version": row["version"],
        "metric": metric,
        "mode": row["mode"],
    }
    base = dict(
        task="opencompass",
        method=method,
        metric="accuracy" if metric in ACCURACY_METRICS else metric,
        dataset=name or dataset,
    )
    text = (row.get(column) or "").strip()
    try:
        value = float(text)
    except ValueError:
        reason = "no result in the OpenCompass summary" if text in ("", "-") else f"not a number: {text!r}"
        return Cell(**base, status="error", detail={**detail, "error": reason})
    return Cell(**base, value=value, detail=detail)


def _is_separator(row: dict[str, str]) -> bool:
    name = row["dataset"].strip()
    return not name or (
        name.startswith("---") and all(v.strip() in ("", "-") for k, v in row.items() if k != "dataset")
    )


def _other_split(dataset: str) -> bool:
    from coca_eval.opencompass.report import canonical

    name = dataset.strip()
    return name not in _KEPT and canonical(name) in {canonical(a) for a in _KEPT}
