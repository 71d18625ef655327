"""Hand-made LongPPL runs: documents with chosen key-token NLLs, formed into cells by the task's own
``combine``, for the report's and the gate's tests (no model involved)."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.ppl.longppl.task import combine_longppl_cell
from coca_eval.results import Cell, Run

PARAMS = {"dataset": "books", "num_docs": 12, "doc_tokens": 128, "lengths": [96], "mode": "truncated",
          "bos": "auto", "seed": 0, "evaluator_model": "judge", "key_tokens": None, "short": 24, "step": 10,
          "bound": 2.0, "margin": 2.0}  # fmt: skip
CONTEXT = {"mode": "truncated", "bos": "never", "doc_tokens": 128, "evaluator": "judge",
           "key_tokens_from": None, "short": 24, "step": 10, "bound": 2.0, "margin": 2.0}  # fmt: skip


def key_spans(doc: int, keys: int) -> list[list[int]]:
    """``keys`` one-character key spans of document ``doc``, two characters apart."""
    return [[10 + doc + 2 * k, 11 + doc + 2 * k] for k in range(keys)]


def longppl_cell(
    key_nll: Sequence[float],
    keys: Sequence[int],
    other_nll: float = 2.5,
    method: str = "m",
    length: int = 96,
    spans: Sequence[list[list[int]]] | None = None,
    context: dict | None = None,
) -> Cell:
    """One cell: document i has ``keys[i]`` key tokens of mean NLL ``key_nll[i]`` among 90 scored
    tokens, the others at ``other_nll`` nats each; ``context`` overrides what the run recorded (its
    evaluator, its key-token file)."""
    parts = []
    for i, (nll, count) in enumerate(zip(key_nll, keys, strict=True)):
        count = int(count)
        parts.append(
            {
                "doc_id": f"d{i}",
                "text_sha": f"text{i}",
                "spans": key_spans(i, count) if spans is None else spans[i],
                "key_tokens": count,
                "key_nll_sum": float(nll * count),
                "tokens": 90,
                "nll_sum": float(nll * count + other_nll * (90 - count)),
            }
        )
    base = {"task": "longppl", "method": method, "metric": "longppl", "length": length, "dataset": "books"}
    return combine_longppl_cell(base, parts, {**CONTEXT, **(context or {})})


def longppl_run(cells: Sequence[Cell], **params) -> Run:
    return Run(config={"task": "longppl", "params": {**PARAMS, **params}}, cells=list(cells))
