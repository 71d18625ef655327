"""lm-eval tasks outside RULER's port and its perplexity tasks (generation, multiple choice) as
``lm-eval`` cells that keep lm-eval's task and metric names.

Their prompts, references and scoring are lm-eval's own and are not redone here: each sample's metric
value is read from the samples file (never derived from the aggregate), and each aggregate lm-eval
printed must be the mean of its samples' values. A metric lm-eval aggregates otherwise (a corpus-level
BLEU) is refused in one line naming it. A metric under a filter other than ``none`` keeps lm-eval's key,
``exact_match,flexible-extract``; each sample keeps its doc_id (the gate pairs on it with the prompt's
and the target's hashes), its answer and its target.
"""

from __future__ import annotations

import math
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell

TASK = "lm-eval"


def metric_names(printed: dict[str, Any]) -> list[tuple[str, str]]:
    """(metric, filter) for every ``metric,filter`` value lm-eval printed (its standard errors left)."""
    pairs = []
    for key, value in printed.items():
        metric, _, filtered = key.partition(",")
        if filtered and not metric.endswith("_stderr") and isinstance(value, int | float):
            pairs.append((metric, filtered))
    return pairs


def _aggregations(config: dict[str, Any]) -> dict[str, str]:
    return {
        str(m["metric"]): str(m["aggregation"])
        for m in config.get("metric_list") or []
        if isinstance(m, dict) and isinstance(m.get("aggregation"), str)
    }


def sample_record(sample, metric: str, where: str) -> dict:
    """A sample's record: lm-eval's doc_id, hashes, answer, target and its value of ``metric``."""
    extra = sample.model_extra or {}
    value = extra.get(metric)
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise CocaEvalError(f"{where}: doc {sample.doc_id} has no numeric {metric} (got {value!r})")
    answer = sample.filtered_resps[0] if sample.filtered_resps else ""
    return {
        "index": sample.doc_id,
        "prompt_sha256": sample.prompt_hash,
        "target_sha256": extra.get("target_hash"),
        "doc_hash": sample.doc_hash,
        "output": answer if isinstance(answer, str) else str(answer),
        "target": str(extra.get("target", "")),
        "value": float(value),
    }


def metric_cells(
    task: str, printed: dict, config: dict, samples: list, method: str, where: str
) -> list[Cell]:
    """One cell per (metric, filter) lm-eval printed for ``task``: its value lm-eval's, held to the mean
    of its samples' values."""
    aggregations = _aggregations(config)
    names = metric_names(printed)
    if not names:
        raise CocaEvalError(f"{where}: {task} prints no metric")
    cells = []
    for metric, filtered in names:
        if aggregations.get(metric, "mean") != "mean":
            raise CocaEvalError(
                f"{where}: {task}'s {metric} is aggregated by {aggregations[metric]}, not a mean of samples: "
                "it cannot be imported sample by sample"
            )
        chosen = [s for s in samples if (s.model_extra or {}).get("filter", "none") == filtered]
        records = sorted((sample_record(s, metric, where) for s in chosen), key=lambda r: r["index"])
        if not records:
            raise CocaEvalError(f"{where}: {task} has no samples under filter {filtered}")
        mean, value = sum(r["value"] for r in records) / len(records), printed[f"{metric},{filtered}"]
        if not math.isclose(value, mean, rel_tol=1e-9, abs_tol=1e-12):
            raise CocaEvalError(
                f"{where}: {task} prints {metric} {value!r} but its {len(records)} samples average {mean}"
            )
        name = metric if filtered == "none" else f"{metric},{filtered}"
        detail = {
            "samples": records,
            "imported_from": {"harness": "lm-eval", "task": task, "filter": filtered},
        }
        cells.append(
            Cell(task=TASK, method=method, metric=name, dataset=task, value=float(value), n=len(records),
                 status="ok", detail=detail)
        )  # fmt: skip
    return cells
