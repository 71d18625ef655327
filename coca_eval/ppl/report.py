"""How reports and the gate read a perplexity cell: its protocol caption, interval and documents."""

from __future__ import annotations

import math

from coca_eval.intervals import ppl_interval
from coca_eval.ppl.records import DocPart, bits_per_byte, parts_of, word_perplexity
from coca_eval.ppl.windows import disjoint_lengths
from coca_eval.results import Cell, Run, units_by_key


def doc_parts(cell: Cell) -> list[DocPart]:
    """The per-document NLL sums and token counts a cell keeps (empty for a cell without them)."""
    return parts_of(cell.detail)


def windows_caption(params: dict, lengths: list[int]) -> str:
    """How the windows advance, the one caption of the stride rule (the report's protocol line and the
    ``ppl`` command's heading): a stride that reaches the window length makes disjoint windows, not
    sliding ones, so the caption says at which of the run's lengths that happens."""
    mode, stride = params.get("mode"), params.get("stride")
    if mode == "truncated":
        return "truncated windows (the first L tokens of each document)"
    if mode != "sliding" or not isinstance(stride, int) or not lengths:
        return f"{mode} windows, stride {stride}"
    disjoint = disjoint_lengths(stride, lengths)
    if len(disjoint) == len(lengths):
        return f"disjoint windows (stride {stride} >= L)"
    if disjoint:
        return f"sliding windows, stride {stride} (disjoint at L <= {max(disjoint)})"
    return f"sliding windows, stride {stride}"


def protocol_line(run: Run) -> str:
    """One sentence under the tables saying how the numbers were made."""
    params = run.config.get("params") or {}
    docs = max((len(doc_parts(c)) for c in run.cells), default=0)
    lengths = sorted({c.length for c in run.cells if c.length is not None})
    return (
        f"Perplexity: {params.get('dataset')}, {docs} documents x {params.get('doc_tokens')} tokens, "
        f"{windows_caption(params, lengths)}, BOS {params.get('bos')}, seed {params.get('seed')}."
    )


def interval(cell: Cell) -> tuple[float, float] | None:
    """95 % document bootstrap of the micro-averaged PPL (None with fewer than two documents)."""
    docs = doc_parts(cell)
    if len(docs) > 1 and all(d.nll_sum is not None for d in docs):
        return ppl_interval([d.nll_sum for d in docs], [d.tokens for d in docs])
    return None


def units(cell: Cell) -> int | None:
    """Documents: the units the interval resamples."""
    return len(doc_parts(cell)) or cell.n


def unit_ids(cell: Cell) -> dict[str, int]:
    """Document id -> scored tokens: two runs' cells must cover exactly these to be compared, and a
    document held twice is refused (read on every load)."""
    return units_by_key(((d.doc_id, d.tokens) for d in doc_parts(cell)), "document")


def _view(cell: Cell, metric: str, value: float | None) -> Cell:
    """The cell showing another metric of the same documents (an error cell where it cannot)."""
    if cell.status != "ok":
        return cell.model_copy(update={"metric": metric})
    if value is None or not math.isfinite(value):
        reason = f"no {metric}: the run kept no byte and word counts (coca-eval/1)"
        return cell.model_copy(update={"metric": metric, "value": None, "status": "error",
                                       "detail": {**cell.detail, "error": reason}})  # fmt: skip
    return cell.model_copy(update={"metric": metric, "value": value})


def bpb_view(cell: Cell) -> Cell:
    """``report --metric bpb``: bits per byte from the same per-document sums."""
    return _view(cell, "bpb", bits_per_byte(doc_parts(cell)))


def word_ppl_view(cell: Cell) -> Cell:
    """``report --metric word_ppl``: word perplexity from the same per-document sums."""
    return _view(cell, "word_ppl", word_perplexity(doc_parts(cell)))
