"""The seed papers' printed numbers, shipped as CSV data so a report can set ours beside theirs.

The CSVs keep the papers' text exactly (``OOM``, ``inf``, ``+0.07``): a transcription, not a parse.
The CoCA papers print passkey accuracy 0-1; :func:`paper_rows` reads those rows in points (``0.99`` as
``99``, ``-0.12`` as ``-12``), the unit of every accuracy-like score here, so they sit beside ours.
They live in ``coca_eval/paper/tables`` inside the package, so a non-editable install finds them
through :mod:`importlib.resources` just like the task presets.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from coca_eval.errors import CocaEvalError

GROUP_NAMES = {"from_scratch": "Training from scratch", "fine_tuned": "Fine-tuning LLM"}


@dataclass(frozen=True)
class PaperSpec:
    """How to read one CSV: which columns name a row, which one groups rows, which selects a task."""

    file: str
    caption: str
    tasks: tuple[str, ...]
    label: tuple[str, ...] = ("method",)
    group: str | None = None
    group_format: str = "{}"
    task_column: str | None = None
    bold: bool = True
    fractions: tuple[str, ...] = ("passkey",)  # tasks the paper printed 0-1 (read in points)


PAPER_TABLES: dict[str, PaperSpec] = {
    "table1": PaperSpec(
        "coca_table1_pg19_ppl.csv",
        "CoCA Table 1: PG-19 perplexity, 100 documents, S = 512",
        ("ppl",),
        group="group",
    ),
    "table2": PaperSpec(
        "coca_table2_passkey.csv", "CoCA Table 2: passkey retrieval accuracy", ("passkey",), group="group"
    ),
    "table3": PaperSpec(
        "coca_table3_strict_vs_slack.csv",
        "CoCA Table 3: CoCA-Strict as a change from CoCA-Slack",
        ("ppl", "passkey"),
        label=("row",),
        group="ntk_factor",
        group_format="dynamic NTK x{}",
        task_column="metric",
        bold=False,
    ),
    "table4": PaperSpec(
        "coca_table4_pi.csv",
        "CoCA Table 4: with position interpolation, fine-tuned at 32k",
        ("ppl", "passkey"),
        task_column="metric",
    ),
    "table5": PaperSpec(
        "coca_table5_opencompass.csv",
        "CoCA Table 5: OpenCompass",
        ("opencompass",),
        label=("dataset",),
        group="category",
        bold=False,
    ),
    "v1-table4": PaperSpec(
        "coca_v1_table4_ntk_ppl.csv", "CoCA v1 Table 4: perplexity, dynamic NTK", ("ppl",)
    ),
    "v1-table5": PaperSpec(
        "coca_v1_table5_ntk_passkey.csv", "CoCA v1 Table 5: passkey accuracy, dynamic NTK", ("passkey",)
    ),
    "prope-table2": PaperSpec(
        "prope_table2_ppl.csv", "p-RoPE Table 2: perplexity by position encoding", (), label=("encoding",)
    ),
}


@dataclass(frozen=True)
class PaperRow:
    label: str
    group: str | None
    values: dict[str, str]


def tables_dir() -> Path:
    return Path(str(resources.files("coca_eval"))) / "paper" / "tables"


def paper_spec(key: str) -> PaperSpec:
    if key not in PAPER_TABLES:
        raise CocaEvalError(f"unknown paper table {key!r} (known: {', '.join(PAPER_TABLES)})")
    return PAPER_TABLES[key]


def paper_rows(key: str, task: str | None = None) -> list[PaperRow]:
    """The table's rows (only those for ``task`` when the CSV mixes perplexity and passkey)."""
    spec = paper_spec(key)
    with open(tables_dir() / spec.file, encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    if spec.task_column and task is not None:
        records = [r for r in records if r[spec.task_column] == task]
    meta = set(spec.label) | {spec.group, spec.task_column}
    return [
        PaperRow(
            " ".join(r[c] for c in spec.label),
            _group(spec, r[spec.group]) if spec.group else None,
            {k: _points(v) if _in_fractions(spec, r) else v for k, v in r.items() if k not in meta},
        )
        for r in records
    ]


def _in_fractions(spec: PaperSpec, record: dict[str, str]) -> bool:
    """Whether a CSV row holds a task the paper printed 0-1 (its task column, else the table's task)."""
    task = record[spec.task_column] if spec.task_column else next(iter(spec.tasks), None)
    return task in spec.fractions


def _points(text: str) -> str:
    """A paper's fraction in points, with the digits it printed: ``0.99`` -> ``99``, ``+0.0`` -> ``+0``,
    ``0.955`` -> ``95.5``; ``OOM`` and other words as printed."""
    try:
        value = float(text)
    except ValueError:
        return text
    decimals = max(len(text.partition(".")[2]) - 2, 0)
    return f"{100 * value:{'+' if text.startswith(('+', '-')) else ''}.{decimals}f}"


def _group(spec: PaperSpec, value: str) -> str:
    return GROUP_NAMES.get(value, spec.group_format.format(value))
