"""The gate's view of imported lm-eval perplexity cells: the same documents (lm-eval's doc_id with the
same document hash and counts) compared by the paired document bootstrap that ``ppl`` uses, per word
for word perplexity and per byte for byte perplexity and bits per byte (a monotone function of it)."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.stats import PairedResult
from coca_eval.imported.harness_perplexity import COUNTS, aggregate
from coca_eval.results import Cell, CellPair


def document_ids(cell: Cell) -> dict[int, tuple[str, int, int]]:
    """lm-eval doc_id -> (document hash, words, bytes): two cells must hold exactly these to pair."""
    return {int(d["index"]): (str(d["doc_hash"]), int(d["words"]), int(d["bytes"])) for d in _documents(cell)}


def contradiction(cell: Cell) -> str | None:
    """Why the cell's value is not what its documents give (lm-eval's aggregation), or None."""
    if cell.status != "ok" or cell.metric not in COUNTS:
        return None
    documents = _documents(cell)
    ours = aggregate(cell.metric, documents)
    if cell.n != len(documents) or abs(ours - cell.value) > 1e-9 * max(1.0, abs(ours)):
        return f"{cell.metric} is {cell.value} but its {len(documents)} documents give {ours:g}"
    return None


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """The candidate's perplexity rise on the baseline's very documents (per the metric's unit)."""
    from coca_eval.ppl.gate import document_rise

    unit = COUNTS.get(pair.base.metric)
    if unit is None:
        return f"no paired test for {pair.base.metric}"
    base = {d["index"]: (-d["loglikelihood"], d[unit]) for d in _documents(pair.base)}
    if len(base) < 2:
        return "one document, so no paired test is possible"
    cand = {d["index"]: -d["loglikelihood"] for d in _documents(pair.cand)}
    return len(base), document_rise(base, cand, options, seed)


def _documents(cell: Cell) -> list[dict]:
    documents = cell.detail.get("documents")
    if not isinstance(documents, list):
        raise ValueError("no per-document records (documents)")
    return documents
