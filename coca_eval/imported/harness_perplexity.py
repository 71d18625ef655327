"""lm-eval's perplexity tasks (``output_type: loglikelihood_rolling``, such as its ``wikitext``) as
``lm-eval`` cells that keep lm-eval's task and metric names.

Their protocol is lm-eval's own (each whole document scored in non-overlapping windows of the model's
``max_length``; perplexity per word or per byte of the document), not this project's sliding-window
perplexity at a fixed length, so they are not ``ppl`` cells. Each document's log-likelihood and its word
and byte counts are read from the samples file; the counts must be what lm-eval's default rule gives
its target (words split on white space, UTF-8 bytes), every metric pair must hold that document's
log-likelihood, and every aggregate lm-eval printed must follow from its documents
(``exp(-sum ll / sum words)``, the same per byte, ``-sum ll / sum bytes / ln 2``): a file that
disagrees with itself is refused in one line, never imported.
"""

from __future__ import annotations

import math
import re
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell

TASK = (
    "lm-eval-perplexity"  # the cells' task: lm-eval's own protocol, lm-eval's task name as the cell's dataset
)
COUNTS = {"word_perplexity": "words", "byte_perplexity": "bytes", "bits_per_byte": "bytes"}


def is_perplexity_task(config: dict[str, Any]) -> bool:
    """Whether lm-eval scored the task as rolling log-likelihood (its perplexity tasks)."""
    return config.get("output_type") == "loglikelihood_rolling"


def aggregate(metric: str, records: list[dict]) -> float:
    """lm-eval's aggregation of ``metric`` over the documents (its weighted_perplexity, bits_per_byte)."""
    total = sum(r["loglikelihood"] for r in records)
    count = sum(r[COUNTS[metric]] for r in records)
    return -total / count / math.log(2) if metric == "bits_per_byte" else math.exp(-total / count)


def document_record(sample, metrics: list[str], where: str) -> dict:
    """A document's record: its index (lm-eval's doc_id), hashes, log-likelihood and counts, each
    checked against the sample's own fields."""
    extra = sample.model_extra or {}
    target = extra.get("target")
    try:
        loglikelihood = float(sample.filtered_resps[0])
    except (IndexError, TypeError, ValueError):
        raise CocaEvalError(f"{where}: doc {sample.doc_id} has no log-likelihood in filtered_resps") from None
    if not isinstance(target, str) or not math.isfinite(loglikelihood):
        raise CocaEvalError(f"{where}: doc {sample.doc_id} lacks its target or a finite log-likelihood")
    record = {
        "index": sample.doc_id,
        "doc_hash": sample.doc_hash,
        "target_sha256": extra.get("target_hash"),
        "loglikelihood": loglikelihood,
        "words": len(re.split(r"\s+", target)),
        "bytes": len(target.encode("utf-8")),
    }
    for metric in metrics:
        pair = extra.get(metric)
        if not (isinstance(pair, list) and len(pair) == 2):
            raise CocaEvalError(f"{where}: doc {sample.doc_id} has no {metric} pair")
        count = record[COUNTS[metric]]
        if not math.isclose(float(pair[0]), loglikelihood, rel_tol=1e-12) or pair[1] != count:
            raise CocaEvalError(
                f"{where}: doc {sample.doc_id}'s {metric} is {pair} but its log-likelihood is "
                f"{loglikelihood} and its target has {count} {COUNTS[metric]}"
            )
    return record


def perplexity_cells(task: str, printed: dict, samples: list, method: str, where: str) -> list[Cell]:
    """One cell per metric lm-eval printed for ``task``, its value lm-eval's and checked against the
    documents'."""
    metrics = [m for m in COUNTS if f"{m},none" in printed]
    if not metrics:
        raise CocaEvalError(f"{where}: {task} prints none of {', '.join(COUNTS)}")
    records = sorted((document_record(s, metrics, where) for s in samples), key=lambda r: r["index"])
    if not records:
        raise CocaEvalError(f"{where}: {task} has no samples")
    cells = []
    for metric in metrics:
        value, ours = printed[f"{metric},none"], aggregate(metric, records)
        if not isinstance(value, int | float) or not math.isclose(value, ours, rel_tol=1e-9):
            raise CocaEvalError(
                f"{where}: {task} prints {metric} {value!r} but its {len(records)} documents give {ours}"
            )
        detail = {"documents": records, "imported_from": {"harness": "lm-eval", "task": task}}
        cells.append(
            Cell(task=TASK, method=method, metric=metric, dataset=task, value=float(value), n=len(records),
                 status="ok", detail=detail)
        )  # fmt: skip
    return cells
