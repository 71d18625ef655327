"""The gate's paired test for perplexity: a document bootstrap of the PPL ratio (see gate.stats)."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import CellPair
from coca_eval.gate.stats import PairedResult, paired_ppl_ratio
from coca_eval.ppl.report import doc_parts


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """PPL rise of the candidate on the very documents of the baseline, or why there is no test."""
    docs_b = {d.doc_id: d for d in doc_parts(pair.base)}
    docs_c = {d.doc_id: d for d in doc_parts(pair.cand)}
    if not docs_b or not docs_c:
        return "no per-document NLL in the run"
    ids = list(docs_b)
    if len(ids) < 2:
        return "one document, so no paired test is possible"
    result = paired_ppl_ratio(
        [docs_b[i].nll_sum for i in ids],
        [docs_c[i].nll_sum for i in ids],
        [docs_b[i].tokens for i in ids],
        options.alpha,
        options.n_boot,
        seed,
    )
    return len(ids), result
