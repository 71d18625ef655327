"""``frequencies``: how much of each query, key and value sits in each RoPE plane (p-RoPE paper §4,
Fig 3, 4 and 10).

The mean 2-norm of every 2-D chunk is taken where RoPE is applied (after Gemma 3's q/k norm, before
rotation), per head; values, which RoPE never touches, are chunked the same way as the paper's
control. Per layer the maps are averaged over heads; per head they are kept for chosen layers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coca_eval.analyses.capture import layer_lists, observe
from coca_eval.analyses.params import AnalysisParams
from coca_eval.analyses.planes import chunk_norms, frequencies_of, plane_count
from coca_eval.analyses.records import FrequencyDetail, LayerShares, NormMaps
from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell

DOMINANT = 0.9  # dominant planes: the fewest that hold this share of the norm


def quarter_shares(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(layers, P) -> share of each layer's summed norm in its lowest and its highest quarter of
    frequencies (plane 0 is the highest) -> (layers,), (layers,)."""
    quarter = max(1, maps.shape[1] // 4)
    total = maps.sum(axis=1)  # (layers,)
    return maps[:, -quarter:].sum(axis=1) / total, maps[:, :quarter].sum(axis=1) / total


def dominant_planes(norms: np.ndarray, share: float = DOMINANT) -> list[int]:
    """The fewest planes whose norms add up to ``share`` of the total, in plane order: a planted band
    comes back as itself, a spread-out head as most of its planes."""
    order = np.argsort(norms)[::-1]  # (P,) largest first
    needed = int(np.searchsorted(np.cumsum(norms[order]), share * norms.sum())) + 1
    return sorted(int(j) for j in order[:needed])


def chosen_layers(params: AnalysisParams, count: int) -> list[int]:
    """``--layers``, or the first, middle and last layer (where the paper finds high frequencies)."""
    layers = list(params.layers) if params.layers else sorted({0, count // 2, count - 1})
    if max(layers) >= count:
        raise CocaEvalError(f"--layers: the model has layers 0..{count - 1}, not {max(layers)}")
    return layers


class FrequencyAnalysis:
    name, metric = "frequencies", "low_quarter_share"

    def measure(self, backend: Any, ids: list[int], params: AnalysisParams, advance) -> dict:
        q, k, v, theta, planes, collinear = {}, {}, {}, {}, {}, []

        def on_rope(layer, module, query, key, cos, sin):
            planes[layer] = plane_count(cos)
            q[layer] = chunk_norms(query, planes[layer]).tolist()  # (h, P)
            k[layer] = chunk_norms(key, planes[layer]).tolist()  # (kv, P)
            theta[layer] = frequencies_of(cos, sin).tolist()  # (P,)
            collinear.append(hasattr(module, "strict"))  # CoCA's attention: k is t

        def on_attention(layer, module, query, key, value, scaling, window):
            v[layer] = chunk_norms(value, planes[layer]).tolist()  # (kv, P)

        observe(backend, ids, self.name, advance, on_rope, on_attention)
        return {**layer_lists(self.name, q=q, k=k, v=v, theta=theta), "collinear": any(collinear)}

    def combine(self, base: dict, parts: list[dict], params: AnalysisParams) -> Cell:
        q, k, v = (np.mean([p[name] for p in parts], axis=0) for name in "qkv")  # (L, heads, P) each
        layer_maps = NormMaps(q=q.mean(axis=1).tolist(), k=k.mean(axis=1).tolist(), v=v.mean(axis=1).tolist())
        q_low, q_high = quarter_shares(q.mean(axis=1))
        k_low, k_high = quarter_shares(k.mean(axis=1))
        detail = FrequencyDetail(
            docs=len(parts),
            theta=parts[0]["theta"],
            layers=layer_maps,
            heads={
                str(layer): NormMaps(q=q[layer].tolist(), k=k[layer].tolist(), v=v[layer].tolist())
                for layer in chosen_layers(params, q.shape[0])
            },
            shares=LayerShares(
                q_low=q_low.tolist(), q_high=q_high.tolist(), k_low=k_low.tolist(), k_high=k_high.tolist()
            ),
            dominant_planes={
                "q": dominant_planes(q.mean(axis=(0, 1))),
                "k": dominant_planes(k.mean(axis=(0, 1))),
            },
            collinear=parts[0]["collinear"],
        )
        value = float((q_low.mean() + k_low.mean()) / 2)
        return Cell(**base, value=value, n=len(parts), detail=detail.model_dump())
