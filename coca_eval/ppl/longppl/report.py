"""How reports read a LongPPL cell: its protocol caption, its interval and what ``n=`` counts.

LongPPL pools the key tokens of every document (``exp(sum key NLL / sum key tokens)``), so its interval
is ppl's document bootstrap applied to the documents' key-token sums: the documents are still the
independent units, and one without a key token is still one of them (it dilutes a draw's key tokens
less than it would a mean of per-document values, but it is drawn like any other).
"""

from __future__ import annotations

from pathlib import Path

from coca_eval.intervals import ppl_interval
from coca_eval.lengths import format_length
from coca_eval.ppl.longppl.records import longppl_parts
from coca_eval.results import Cell, Run


def interval(cell: Cell) -> tuple[float, float] | None:
    """95 % document bootstrap of the pooled key-token perplexity; None when fewer than two documents
    hold a key token (a draw could then only repeat one document's value, which says nothing about
    how the value moves with the documents drawn)."""
    parts = longppl_parts(cell)
    if sum(1 for p in parts if p.key_tokens) < 2 or any(p.key_nll_sum is None for p in parts):
        return None
    return ppl_interval([p.key_nll_sum for p in parts], [p.key_tokens for p in parts])


def units(cell: Cell) -> int | None:
    """Documents: the units the interval resamples (``cell.n`` counts key tokens)."""
    return len(longppl_parts(cell)) or None


def no_key_token(cell: Cell) -> bool:
    """Whether the cell is undefined because no document holds a key token (an ``error`` cell whose
    documents were all scored), rather than because a document failed."""
    parts = longppl_parts(cell)
    return cell.status == "error" and bool(parts) and all(p.error is None and not p.key_tokens for p in parts)


def key_source(params: dict) -> str:
    """Where a run's key tokens came from, in words."""
    if params.get("key_tokens"):
        return f"from {Path(str(params['key_tokens'])).name}"
    if params.get("evaluator_model"):
        return f"judged by {params['evaluator_model']}"
    return "judged by each evaluated model itself"


def protocol_line(run: Run) -> str:
    """One sentence under the LongPPL tables: documents, window, BOS, the key-token rule and source,
    and which cells have no value because no token was key (shown as ``error``: LongPPL undefined)."""
    params = run.config.get("params") or {}
    docs = max((len(longppl_parts(c)) for c in run.cells), default=0)
    line = (
        f"LongPPL: {params.get('dataset')}, {docs} documents x {params.get('doc_tokens')} tokens, the first "
        f"L tokens in one window, BOS {params.get('bos')}, seed {params.get('seed')}; key tokens "
        f"{key_source(params)} (short {params.get('short')}, step {params.get('step')}, "
        f"loss < {params.get('bound')}, gain > {params.get('margin')})."
    )
    undefined = [f"{c.method} @ {format_length(c.length)}" for c in run.cells if no_key_token(c)]
    if undefined:
        line += f" No key token, so LongPPL undefined (error): {', '.join(undefined)}."
    return line
