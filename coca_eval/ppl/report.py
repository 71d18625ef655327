"""How reports and the gate read a perplexity cell: its protocol caption, interval and documents."""

from __future__ import annotations

from coca_eval.results import Cell, Run


def doc_parts(cell: Cell) -> list[dict]:
    """The per-document NLL sums and token counts a cell keeps (empty for a cell without them)."""
    return list(cell.detail.get("docs") or [])


def protocol_line(run: Run) -> str:
    """One sentence under the tables saying how the numbers were made."""
    params = run.config.get("params") or {}
    docs = max((len(doc_parts(c)) for c in run.cells), default=0)
    return (
        f"Perplexity: {params.get('dataset')}, {docs} documents x {params.get('doc_tokens')} tokens, "
        f"{params.get('mode')} windows, stride {params.get('stride')}, BOS {params.get('bos')}, "
        f"seed {params.get('seed')}."
    )


def interval(cell: Cell) -> tuple[float, float] | None:
    """95 % document bootstrap of the micro-averaged PPL (None with fewer than two documents)."""
    from coca_eval.gate.stats import ppl_interval

    docs = doc_parts(cell)
    if len(docs) > 1 and all(d.get("nll_sum") is not None for d in docs):
        return ppl_interval([d["nll_sum"] for d in docs], [d["tokens"] for d in docs])
    return None


def units(cell: Cell) -> int | None:
    """Documents: the units the interval resamples."""
    return len(doc_parts(cell)) or cell.n


def unit_ids(cell: Cell) -> dict[str, int]:
    """Document id -> scored tokens: two runs' cells must cover exactly these to be compared."""
    return {d["doc_id"]: d["tokens"] for d in doc_parts(cell)}
