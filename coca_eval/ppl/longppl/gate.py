"""The gate's view of LongPPL: ppl's paired document bootstrap (see gate.stats) on the key-token sums,
and what makes two LongPPL cells comparable at all.

A paired comparison of LongPPL asks how the candidate does on the very tokens the baseline was scored
on, so both cells must hold one key-token set: per document the same text, the same key spans and the
same number of key tokens (the same tokenizer). Where the runs got those spans from (an evaluator, a
``--key-tokens`` file, the model itself) does not matter once the spans are compared; that they differ
is a refusal, never a verdict, since LongPPL on two token sets measures two different things.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from coca_eval.gate.options import GateOptions
from coca_eval.gate.stats import PairedResult
from coca_eval.ppl.gate import document_rise
from coca_eval.ppl.longppl.records import judged_by_itself, longppl_parts
from coca_eval.results import Cell, CellPair, units_by_key

SAME_SET_HINT = (
    "a paired LongPPL comparison needs one key-token set: score the candidate on the baseline's "
    "(coca-eval ppl --metric longppl --key-tokens BASELINE.json)"
)


@dataclass(frozen=True)
class KeyTokens:
    """One document's key-token set as a cell scored it."""

    text_sha: str
    spans: tuple[tuple[int, ...], ...]
    key_tokens: int


def unit_ids(cell: Cell) -> dict[str, KeyTokens]:
    """Document id -> its key-token set: two runs' cells must hold exactly these to be compared, and a
    document held twice is refused (read on every load)."""
    return units_by_key(
        (
            (p.doc_id, KeyTokens(p.text_sha, tuple(tuple(s) for s in p.spans), p.key_tokens))
            for p in longppl_parts(cell)
        ),
        "document",
    )


def key_sets_differ(units_b: dict[str, KeyTokens], units_c: dict[str, KeyTokens], where: str) -> str:
    """Why two cells' key-token sets are not one (the gate's one-line refusal), naming the first
    document where they part."""
    if units_b.keys() != units_c.keys():
        return f"documents differ at {where}"
    doc, base, cand = next((d, b, units_c[d]) for d, b in units_b.items() if b != units_c[d])
    if base.text_sha != cand.text_sha:
        return f"document {doc!r} is another text at {where} (another tokenizer or document source)"
    if base.spans != cand.spans:
        counts = f"{len(base.spans)} vs {len(cand.spans)} key spans"
        if len(base.spans) == len(cand.spans):
            counts = f"{len(base.spans)} key spans in each run, not all at the same characters"
        return f"the key-token sets differ at {where} (document {doc!r}: {counts}); {SAME_SET_HINT}"
    return (
        f"the key spans agree at {where}, but document {doc!r} has {base.key_tokens} vs {cand.key_tokens} "
        "key tokens (another tokenizer): LongPPL over different tokens cannot be paired"
    )


def paired_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """LongPPL rise of the candidate on the baseline's key tokens, or why there is no test.

    Every document is drawn (one without a key token is a unit like any other); the returned count is
    of the documents holding a key token, the only ones whose difference can have a sign, so the
    sign-flip test's floor is 2^-count."""
    docs_b = {p.doc_id: p for p in longppl_parts(pair.base)}
    docs_c = {p.doc_id: p for p in longppl_parts(pair.cand)}
    if not docs_b or not docs_c:
        return "no per-document key-token NLL in the run"
    ids = list(docs_b)
    holding = sum(1 for i in ids if docs_b[i].key_tokens)
    if holding < 2:
        return f"{holding} document(s) with key tokens, so no paired test is possible"
    base = {i: (docs_b[i].key_nll_sum, docs_b[i].key_tokens) for i in ids}
    return holding, document_rise(base, {i: docs_c[i].key_nll_sum for i in ids}, options, seed)


def notes(pairs: Sequence[CellPair]) -> list[str]:
    """A warning when the candidate was scored on key tokens the baseline model judged for itself: they
    were picked where the baseline's own loss is low, so a candidate as good as it scores worse there."""
    leaning = [
        pair.where
        for pair in pairs
        if pair.base.status == "ok" and judged_by_itself(pair.base) and not judged_by_itself(pair.cand)
    ]
    if not leaning:
        return []
    return [
        f"the LongPPL key tokens of {leaning[0]}"
        + (f" and {len(leaning) - 1} more cells" if leaning[1:] else "")
        + " were judged by the baseline model itself, where its own loss is low, so they favour it over "
        "the candidate; judge the key tokens with a fixed --evaluator-model for both runs"
    ]
