"""LongPPL beside perplexity, one row per method: the comparison Fang et al. draw, where a model whose
perplexity looks fine can still fail on the few tokens that need long context.

    python -m coca_eval.ppl.longppl.compare LONGPPL_RUN [PPL_RUN ...] [--regenerate CMD] > table.md

Each row is a method of the longppl run at its length: the perplexity of every token of the same read
(the longppl cell records it), LongPPL with a 95 % bootstrap interval over documents (resampling whole
documents, as the ppl report does), their ratio, and the key tokens LongPPL averages over. Each ppl run
given adds a column: the same method's perplexity at the same length there (named by its windows), so
a reader can see the all-token number agree with the table it came from. The key tokens are the same
for every row when one evaluator judged them (``--evaluator-model`` or ``--key-tokens``), so the rows
compare on one token set. A row whose model is the evaluator itself is marked: its key tokens were
chosen for their low loss under it, so its LongPPL is below ``exp(bound)`` by construction.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import format_length
from coca_eval.ppl.longppl.report import interval as longppl_interval
from coca_eval.results import Cell, Run
from coca_eval.taskspec import load_checked_run


@dataclass(frozen=True)
class KeyTokenCounts:
    """The key tokens of a cell's documents: in all, per document (least, most), of all scored tokens."""

    total: int
    least: int
    most: int
    scored: int

    @property
    def fraction(self) -> float:
        return self.total / self.scored


@dataclass(frozen=True)
class CompareRow:
    method: str
    length: int
    longppl: float
    interval: tuple[float, float] | None  # None with one document
    keys: KeyTokenCounts
    ppl: float | None  # every token of the same read (None: a document without a finite sum)
    other_ppl: list[float | None]  # one per ppl run given, None where it has no such cell
    is_evaluator: bool


def key_token_counts(cell: Cell) -> KeyTokenCounts:
    docs = cell.detail["docs"]
    per_doc = [d["key_tokens"] for d in docs]
    return KeyTokenCounts(sum(per_doc), min(per_doc), max(per_doc), sum(d["tokens"] for d in docs))


def ppl_at(run: Run, method: str, length: int) -> float | None:
    found = [c.value for c in run.cells if c.method == method and c.length == length and c.status == "ok"]
    return found[0] if found else None


def _evaluator_labels(run: Run) -> set[str]:
    """Labels of the methods that are the evaluator model read as it is (no rope patch)."""
    evaluator = run.config.get("params", {}).get("evaluator_model")
    return {m.label for m in run.settings.methods if m.model == evaluator and m.rope in (None, "none")}


def compare_rows(longppl_run: Run, ppl_runs: Sequence[Run]) -> list[CompareRow]:
    """One row per ok longppl cell, in the run's order."""
    evaluators = _evaluator_labels(longppl_run)
    rows = []
    for cell in longppl_run.cells:
        if cell.task != "longppl" or cell.status != "ok":
            continue
        ppl = [ppl_at(run, cell.method, cell.length) for run in ppl_runs]
        rows.append(
            CompareRow(
                cell.method,
                cell.length,
                cell.value,
                longppl_interval(cell),
                key_token_counts(cell),
                cell.detail.get("ppl"),
                ppl,
                cell.method in evaluators,
            )
        )
    return rows


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _ppl_column(path: Path, run: Run) -> str:
    params = run.config.get("params", {})
    mode = params.get("mode", "sliding")
    windows = f"sliding, S = {params['stride']}" if mode == "sliding" and params.get("stride") else mode
    return f"PPL ({windows}; `{path.name}`)"


def caption(path: Path, run: Run) -> str:
    """Where the key tokens come from: the rule and the evaluator a reader needs to trust LongPPL."""
    params = run.config.get("params", {})
    judge = f"`{params['evaluator_model']}`" if params.get("evaluator_model") else "each evaluated model"
    if params.get("key_tokens"):
        judge = f"the key spans stored in `{Path(params['key_tokens']).name}`"
    return (
        f"LongPPL (`{path.name}`): each document's first L tokens of `{params.get('dataset')}` read in one "
        f"window; key tokens judged by {judge} (short context {params.get('short')}, step "
        f"{params.get('step')}: full-context loss below {params.get('bound')} nats that rises by more than "
        f"{params.get('margin')} nats with the short one). LongPPL averages over the key tokens only, with "
        "a 95 % bootstrap interval over documents; PPL (same read) over every token of the same windows."
    )


def _shared_keys(run: Run, rows: Sequence[CompareRow]) -> str:
    """One sentence on the key tokens when one evaluator (or one stored set) judged them for every row
    and every row holds the same count of them, else empty (each row's count is in its column)."""
    params = run.config.get("params", {})
    one_judge = params.get("evaluator_model") or params.get("key_tokens")
    if not one_judge or len({row.keys for row in rows}) != 1:
        return ""
    keys = rows[0].keys
    return (
        f"Key tokens: {keys.total} of {keys.scored} ({keys.fraction:.2%}), {keys.least} to {keys.most} per "
        "document; every row is scored on the same ones."
    )


def _evaluator_note(run: Run, rows: Sequence[CompareRow]) -> str:
    if not any(row.is_evaluator for row in rows):
        return ""
    bound = float(run.config.get("params", {}).get("bound", 2.0))
    return (
        "(evaluator): the evaluator's own row, scored on the tokens it predicts well with the full "
        f"context; its LongPPL is below exp({bound:g}) = {math.exp(bound):.2f} by construction."
    )


def length_table(rows: Sequence[CompareRow], ppl_columns: Sequence[str]) -> list[str]:
    head = [
        "method",
        *ppl_columns,
        "PPL (same read)",
        "LongPPL",
        "95 % interval",
        "LongPPL / PPL",
        "key tokens",
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in rows:
        interval = "–" if row.interval is None else f"[{row.interval[0]:.2f}, {row.interval[1]:.2f}]"
        label = f"{row.method} (evaluator)" if row.is_evaluator else row.method
        ratio = "–" if not row.ppl else f"{row.longppl / row.ppl:.3f}"
        numbers = [*map(_number, row.other_ppl), _number(row.ppl), f"{row.longppl:.2f}", interval, ratio]
        lines.append("| " + " | ".join([label, *numbers, str(row.keys.total)]) + " |")
    return lines


def markdown(longppl_path: Path, ppl_paths: Sequence[Path], regenerate: str | None = None) -> str:
    """The comparison as a markdown page: the caption, then one table per length."""
    longppl_run = load_checked_run(longppl_path)
    ppl_runs = [load_checked_run(p) for p in ppl_paths]
    rows = compare_rows(longppl_run, ppl_runs)
    if not rows:
        raise CocaEvalError(f"{longppl_path} holds no finished longppl cell")
    columns = [_ppl_column(p, r) for p, r in zip(ppl_paths, ppl_runs, strict=True)]
    out = ["# LongPPL against perplexity", "", caption(longppl_path, longppl_run)]
    for length in sorted({row.length for row in rows}):
        at = [row for row in rows if row.length == length]
        notes = [n for n in (_shared_keys(longppl_run, at), _evaluator_note(longppl_run, at)) if n]
        docs = max(len(c.detail["docs"]) for c in longppl_run.cells if c.length == length)
        out += ["", f"## L = {format_length(length)}, {docs} documents", "", *length_table(at, columns)]
        out += ["", *notes] if notes else []
    if regenerate:
        out += ["", f"Regenerate with `{regenerate}`."]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("longppl_run", type=Path)
    parser.add_argument("ppl_runs", type=Path, nargs="*")
    parser.add_argument("--regenerate", help="the command the table cites for making it again")
    args = parser.parse_args(argv)
    try:
        text = markdown(args.longppl_run, args.ppl_runs, args.regenerate)
    except CocaEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
