"""``attention``: attention logits past the trained length (CoCA v1 §4.5, Fig 8).

Per layer and head: the largest visible logit (the outliers RoPE shows 10-20x above CoCA), and the
softmax mass the final queries put on their ``near`` nearest keys (whether a model still attends to
its neighbourhood). Scores are formed from what the attention kernel receives (so CoCA's q ∘ rope(q)
and rope(t), Gemma 3's sliding windows) one block of query rows at a time (:mod:`.logits`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coca_eval.analyses.capture import layer_lists, observe
from coca_eval.analyses.logits import head_extremes
from coca_eval.analyses.params import AnalysisParams
from coca_eval.analyses.records import AttentionDetail
from coca_eval.results import Cell


def outlier_heads(max_logit: np.ndarray, ratio: float) -> list[dict[str, float]]:
    """Heads whose max logit is at least ``ratio`` times the median head's (by magnitude), loudest first."""
    median = float(np.median(np.abs(max_logit)))
    if median == 0:
        return []
    found = [
        {"layer": int(layer), "head": int(head), "max_logit": float(max_logit[layer, head]),
         "ratio": float(max_logit[layer, head] / median)}
        for layer, head in zip(*np.nonzero(max_logit >= ratio * median), strict=True)
    ]  # fmt: skip
    return sorted(found, key=lambda o: -o["ratio"])


class AttentionAnalysis:
    name, metric = "attention", "max_logit"

    def measure(self, backend: Any, ids: list[int], params: AnalysisParams, advance) -> dict:
        top, mass = {}, {}

        def on_attention(layer, module, query, key, value, scaling, window):
            peak, near = head_extremes(query, key, scaling, window, params.near, params.last_rows)
            top[layer], mass[layer] = peak.tolist(), near.tolist()

        observe(backend, ids, self.name, advance, on_attention=on_attention)
        lists = layer_lists(self.name, max_logit=top, near_mass=mass)
        return {**lists, "trained_context": backend.trained_context}

    def combine(self, base: dict, parts: list[dict], params: AnalysisParams) -> Cell:
        top = np.max([p["max_logit"] for p in parts], axis=0)  # (L, h)
        mass = np.mean([p["near_mass"] for p in parts], axis=0)  # (L, h)
        detail = AttentionDetail(
            docs=len(parts),
            near=params.near,
            last_rows=params.last_rows,
            max_logit=top.tolist(),
            near_mass=mass.tolist(),
            outliers=outlier_heads(top, params.outlier_ratio),
            trained_context=parts[0].get("trained_context"),
        )
        return Cell(**base, value=float(top.max()), n=len(parts), detail=detail.model_dump())
