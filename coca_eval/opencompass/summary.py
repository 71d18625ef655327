"""An OpenCompass summary CSV (``dataset,version,metric,mode,<model>...``) as our cells.

A ``-`` in the summary means the task produced no result (it failed, or never ran). Such an entry
becomes an ``error`` cell: a zero would enter the Total and read as a real score.
"""

from __future__ import annotations

import csv
import io
import math
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


def read_summary(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header's model columns and the rows, each a dict keyed by the header; a wrong header or a
    row that does not fit it is a user error."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CocaEvalError(f"summary file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"cannot read summary file {path}: {exc}") from None
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    _check_header(path, header)
    rows = []
    for row in reader:
        if row:
            _check_row_length(path, reader.line_num, row, header)
            rows.append(dict(zip(header, row, strict=False)))
    return header[len(HEAD) :], rows


def _check_header(path: Path, header: list[str]) -> None:
    """``dataset,version,metric,mode`` then one named column per model, each name once (a repeated
    name would make two models one method)."""
    if tuple(header[: len(HEAD)]) != HEAD or len(header) <= len(HEAD):
        raise CocaEvalError(
            f"{path} is not an OpenCompass summary CSV (header must be {','.join(HEAD)},<model>...)"
        )
    models = header[len(HEAD) :]
    if "" in models:
        raise CocaEvalError(f"{path}: model column {models.index('') + 1} of the header has no name")
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise CocaEvalError(f"{path}: model column {repeated[0]!r} appears more than once in the header")


def _check_row_length(path: Path, line: int, row: list[str], header: list[str]) -> None:
    """A data row must have one field per header column: a short one has lost results (which model's
    is unknowable), a long one has values no column names. Separator rows carry no values and pass."""
    if len(row) == len(header) or _is_separator(dict(zip(header, row, strict=False))):
        return
    raise CocaEvalError(
        f"{path}: line {line} ({row[0].strip()!r}) has {len(row)} fields where the header has {len(header)}"
    )


def summary_cells(path: Path, models: dict[str, str] | None = None) -> list[Cell]:
    """One cell per (dataset row, model column). ``models`` maps OpenCompass abbrs to method labels.

    Separator rows (``----- Exam -----``) are skipped, and so are a suite's per-subject rows when the
    summary also holds the suite's average (Table 5 shows the suite as one row), and the other splits
    of a Table 5 dataset (``csl_test`` beside ``csl_dev``), which would claim the same row.
    """
    columns, rows = read_summary(path)
    rows = [r for r in rows if not _is_separator(r)]
    suites = {_SUITE_NAMES.get(r["dataset"].strip().lower().replace("-", "")) for r in rows} - {None}
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
    value, reason = _score(text)
    if reason is not None:
        return Cell(**base, status="error", detail={**detail, "error": reason})
    return Cell(**base, value=value, detail=detail)


def _score(text: str) -> tuple[float | None, str | None]:
    """The entry as a number, or why it is none: ``-`` (no result), text, or nan/inf (a failed metric
    that would otherwise pass as a score, or be refused by the results file)."""
    if text in ("", "-"):
        return None, "no result in the OpenCompass summary"
    try:
        value = float(text)
    except ValueError:
        return None, f"not a number: {text!r}"
    if not math.isfinite(value):
        return None, f"not a finite number: {text!r}"
    return value, None


def _is_separator(row: dict[str, str]) -> bool:
    name = row["dataset"].strip()
    return not name or (
        name.startswith("---") and all(v.strip() in ("", "-") for k, v in row.items() if k != "dataset")
    )


def _other_split(dataset: str) -> bool:
    from coca_eval.opencompass.report import canonical

    name = dataset.strip()
    return name not in _KEPT and canonical(name) in {canonical(a) for a in _KEPT}
