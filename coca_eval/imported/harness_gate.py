"""The gate's view of imported lm-eval perplexity cells: the same documents (lm-eval's doc_id with the
same document hash and counts) compared by the paired document bootstrap that ``ppl`` uses, per word
for word perplexity and per byte for byte perplexity and bits per byte (a monotone function of it)."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.stats import PairedResult
from coca_eval.imported.harness_perplexity import COUNTS, aggregate
from coca_eval.results import Cell, CellPair, units_by_key


def document_ids(cell: Cell) -> dict[int, tuple[str, int, int]]:
    """lm-eval doc_id -> (document hash, words, bytes): two cells must hold exactly these to pair (a
    doc_id held twice is refused, on every load)."""
    return units_by_key(
        ((int(d["index"]), (str(d["doc_hash"]), int(d["words"]), int(d["bytes"]))) for d in _documents(cell)),
        "document",
    )


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


def sample_ids(cell: Cell) -> dict[int, tuple[str, str]]:
    """lm-eval doc_id -> (prompt hash, target hash): two cells must hold exactly these to pair (a doc_id
    held twice is refused, on every load)."""
    return units_by_key(
        (int(s["index"]), (str(s["prompt_sha256"]), str(s["target_sha256"]))) for s in _samples(cell)
    )


def mean_contradiction(cell: Cell) -> str | None:
    """Why the cell's value is not the mean of its samples' scores, or None."""
    if cell.status != "ok":
        return None
    samples = _samples(cell)
    mean = sum(float(s["value"]) for s in samples) / len(samples)
    if cell.n != len(samples) or abs(mean - cell.value) > 1e-9:
        return f"{cell.metric} is {cell.value} but its {len(samples)} samples average {mean:g}"
    return None


def paired_score_test(pair: CellPair, options: GateOptions, seed: int) -> tuple[int, PairedResult] | str:
    """The candidate's score drop on the baseline's very samples: McNemar where every score is 0 or 1
    (accuracy, exact match), else the paired sample bootstrap of the mean (partial credit); in points
    (x 100, the unit of ``--max-acc-drop``) where every score lies in 0-1, as lm-eval's accuracies do."""
    from coca_eval.gate.stats import mcnemar_drop, paired_mean_drop

    base = {s["index"]: float(s["value"]) for s in _samples(pair.base)}
    cand = {s["index"]: float(s["value"]) for s in _samples(pair.cand)}
    order = sorted(base)
    scores_b, scores_c = [base[i] for i in order], [cand[i] for i in order]
    if set(scores_b + scores_c) <= {0.0, 1.0}:
        result = mcnemar_drop([v == 1.0 for v in scores_b], [v == 1.0 for v in scores_c])
    else:
        result = paired_mean_drop(scores_b, scores_c, options.alpha, options.n_boot, seed)
    if all(0.0 <= v <= 1.0 for v in scores_b + scores_c):  # lm-eval's 0-1 scores: the drop in points
        result = PairedResult(100 * result.effect, 100 * result.low, 100 * result.high, result.p_value)
    return len(order), result


def _samples(cell: Cell) -> list[dict]:
    samples = cell.detail.get("samples")
    if not isinstance(samples, list) or not samples:
        raise ValueError("no per-sample records (samples)")
    return samples
