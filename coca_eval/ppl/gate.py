"""The gate's paired test for perplexity: a document bootstrap of the PPL ratio (see gate.stats); and
the same test on the loss past the trained length (:func:`past_position_runs`)."""

from __future__ import annotations

import math

from coca_eval.errors import CocaEvalError
from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair, pair_methods
from coca_eval.gate.stats import PairedResult, paired_ppl_ratio
from coca_eval.lengths import format_length
from coca_eval.ppl.positions import bucket_edges, is_edge, past
from coca_eval.ppl.records import DocPart, exp_or_inf
from coca_eval.ppl.report import doc_parts
from coca_eval.results import Cell, Run


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """PPL rise of the candidate on the very documents of the baseline, or why there is no test."""
    docs_b = {d.doc_id: d for d in doc_parts(pair.base)}
    docs_c = {d.doc_id: d for d in doc_parts(pair.cand)}
    if not docs_b or not docs_c:
        return "no per-document NLL in the run"
    if len(docs_b) < 2:
        return "one document, so no paired test is possible"
    base = {i: (d.nll_sum, d.tokens) for i, d in docs_b.items()}
    return len(docs_b), document_rise(base, {i: d.nll_sum for i, d in docs_c.items()}, options, seed)


def document_rise(
    base: dict[str, tuple[float, int]], cand: dict[str, float], options: GateOptions, seed: int
) -> PairedResult:
    """The paired perplexity rise over the baseline's documents: ``base`` maps each to its NLL sum and
    scored-token count, ``cand`` to the candidate's NLL sum on the same tokens (ppl's every token,
    LongPPL's key tokens: the one test both gates share)."""
    ids = list(base)
    return paired_ppl_ratio(
        [base[i][0] for i in ids], [cand[i] for i in ids], [base[i][1] for i in ids],
        options.alpha, options.n_boot, seed,
    )  # fmt: skip


def past_position_runs(base: Run, cand: Run, start: int | None) -> tuple[Run, Run]:
    """Both runs' ppl cells restricted to the positions ``>= start`` in the window (``start`` None:
    each baseline method's trained context), so the ordinary paired test compares the loss past the
    trained length document by document: per document, the NLL and token count of those positions.

    A candidate method takes the start of the baseline method it pairs with. A cell whose windows
    reach no position that far is left out (nothing to compare there); a cell whose documents have no
    position buckets (an earlier version's run) is a one-line refusal, never a silent fallback."""
    cells_b, cells_c = [], []
    for label_b, label_c in pair_methods(base, cand):
        first = _start_for(base, label_b, start)
        ours = {_key(c): _past_cell(c, first, "baseline") for c in base.cells if c.method == label_b}
        theirs = {_key(c): _past_cell(c, first, "candidate") for c in cand.cells if c.method == label_c}
        for key, cell in ours.items():  # a cell on one side only stays, for the gate to refuse
            if cell is not None and theirs.get(key, cell) is not None:
                cells_b.append(cell)
        cells_c += [c for k, c in theirs.items() if c is not None and ours.get(k, c) is not None]
    if not cells_b:
        raise CocaEvalError("no ppl cell reaches the positions to compare (past the trained length); "
                            "evaluate at a longer length, e.g. with --mode truncated")  # fmt: skip
    return base.model_copy(update={"cells": cells_b}), cand.model_copy(update={"cells": cells_c})


def _start_for(run: Run, label: str, start: int | None) -> int:
    if start is None:
        entry = next((m for m in run.settings.methods if m.label == label), None)
        start = entry.trained_context if entry is not None else None
        if start is None:
            raise CocaEvalError(f"the baseline run records no trained context for {label!r}; "
                                "give the first position to compare (--from-position N)")  # fmt: skip
    if not is_edge(start):
        edges = bucket_edges(start)[-2:]
        raise CocaEvalError(f"position {start} is not a bucket edge; the buckets around it start at "
                            f"{edges[0]} and {edges[1]} (compare from one of them)")  # fmt: skip
    return start


def _past_cell(cell: Cell, start: int, side: str) -> Cell | None:
    """The cell over the positions ``>= start`` only (labelled so), None when it reaches none."""
    label = f"{cell.method} (positions >= {format_length(start)})"
    if cell.status != "ok":
        return (
            None
            if cell.length is not None and cell.length <= start
            else cell.model_copy(update={"method": label})
        )
    parts = doc_parts(cell)
    if not parts or any(p.positions is None for p in parts):
        raise CocaEvalError(f"the {side} cell {cell.method!r} @ {cell.length} has no loss by position "
                            "(made by an earlier version); rerun it to compare positions")  # fmt: skip
    past_parts = [(p.doc_id, *past(p.positions, start)) for p in parts]
    if any(tokens == 0 for _, _, tokens in past_parts):
        return None
    docs = [DocPart(doc_id=d, nll_sum=nll, tokens=tokens).model_dump(exclude={"error", "positions"})
            for d, nll, tokens in past_parts]  # fmt: skip
    nll, tokens = sum(n for _, n, _ in past_parts), sum(t for _, _, t in past_parts)
    detail = {**cell.detail, "docs": docs, "positions_from": start}
    value = exp_or_inf(nll / tokens)
    finite = {"value": value} if math.isfinite(value) else {"value": None, "status": "inf"}
    return cell.model_copy(update={"method": label, "n": tokens, "detail": detail, **finite})


def _key(cell: Cell) -> tuple:
    return cell.task, cell.metric, cell.dataset, cell.length
