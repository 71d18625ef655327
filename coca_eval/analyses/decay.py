"""``decay``: the closed-form decay curves for the model's own frequencies against its measured mean
logit by distance (RoFormer §3.4.3, CoCA App. D.1, p-RoPE paper Fig 2 and 8).

The frequencies are read from the model's rotary table during the forward (so every rope patch, and
dynamic NTK at the analysed length, is what the curves use); the measured curve is the raw causal
logit q.k x scaling, averaged over heads and queries per distance bin, one layer at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from coca_eval.analyses import closed_forms as cf
from coca_eval.analyses.capture import layer_lists, observe
from coca_eval.analyses.geometry import closed_form_geometry
from coca_eval.analyses.logits import logit_sums_by_distance
from coca_eval.analyses.params import AnalysisParams
from coca_eval.analyses.planes import attention_scaling, frequencies_of
from coca_eval.analyses.records import DecayDetail, Geometry
from coca_eval.results import Cell

NEAR = 16  # the measured curve's "near" part: distances 1 .. NEAR


def measured_edges(length: int, bins: int = 48) -> np.ndarray:
    """Bin edges over distances 0 .. length - 1: each of 0 .. 16 alone, then geometric; last = length."""
    return np.unique(np.concatenate([cf.distance_grid(length, bins), [length]]))


class DecayAnalysis:
    name, metric = "decay", "logit_drop"

    def measure(self, backend: Any, ids: list[int], params: AnalysisParams, advance) -> dict:
        edges = measured_edges(len(ids))
        theta, scale, sums, counts = {}, {}, {}, {}

        def on_rope(layer, module, q, k, cos, sin):
            theta[layer], scale[layer] = frequencies_of(cos, sin).tolist(), attention_scaling(cos, sin)

        def on_attention(layer, module, query, key, value, scaling, window):
            total, count = logit_sums_by_distance(query, key, scaling, torch.as_tensor(edges))
            sums[layer], counts[layer] = total.tolist(), count.tolist()

        observe(backend, ids, self.name, advance, on_rope, on_attention)
        lists = layer_lists(self.name, theta=theta, scaling=scale, sums=sums, counts=counts)
        return {**lists, "edges": edges.tolist()}

    def combine(self, base: dict, parts: list[dict], params: AnalysisParams) -> Cell:
        length = base["length"]
        sums = np.sum([p["sums"] for p in parts], axis=0)  # (layers, bins)
        counts = np.sum([p["counts"] for p in parts], axis=0)  # (layers, bins)
        measured = sums / counts  # (layers, bins)
        mean = measured.mean(axis=0)  # (bins,)
        edges = np.asarray(parts[0]["edges"])  # (bins + 1,)
        near = mean[(edges[:-1] >= 1) & (edges[:-1] <= NEAR)].mean()
        distances = cf.distance_grid(length)
        detail = DecayDetail(
            docs=len(parts),
            distances=distances.tolist(),
            geometries=geometries(parts[0], length, params),
            edges=edges.tolist(),
            measured=measured.tolist(),
            measured_mean=mean.tolist(),
        )
        value = float(near - mean[-1])
        return Cell(**base, value=value, n=len(parts), detail=detail.model_dump())


def geometries(part: dict, length: int, params: AnalysisParams) -> list[Geometry]:
    """One set of curves per distinct frequency table (Gemma 3: sliding and global layers differ)."""
    groups: dict[tuple, list[int]] = {}
    for layer, theta in enumerate(part["theta"]):
        groups.setdefault(tuple(np.round(theta, 12)), []).append(layer)
    return [
        closed_form_geometry(
            np.asarray(part["theta"][layers[0]]),  # (P,)
            part["scaling"][layers[0]],
            layers,
            length,
            params.samples,
            params.seed,
            params.random_bound,
        )
        for layers in groups.values()
    ]
