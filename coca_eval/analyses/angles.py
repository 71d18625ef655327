"""``angles``: the initial angle Theta_j between q_j and k_j in each rotary plane, before rotation
(CoCA §2.2, Fig 3).

With plane j as a complex number, Theta_j = arg(q_j conj(k_j)), measured counter-clockwise from k_j to
q_j, and after rotation the angle is Theta_j + (m - n) theta_j. In a causal model (m > n) the triples
with Theta_j in (pi, 2 pi) are the anomalous regime (scenario d): their score grows with distance for
the tau = (2 pi - Theta_j) / theta_j nearest tokens. For CoCA the key of pair (m, n) is t_n q_m, so
Theta_j is 0 wherever t_n,j > 0 and the key vanishes where it is 0: no triple can be anomalous, and the
measurement shows it from the model's own tensors rather than assuming it.

Pairs (m > n) are sampled (``--pairs`` per document, the same for every layer), so memory stays at
heads x pairs x planes per layer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from coca_eval.analyses.capture import layer_lists, observe
from coca_eval.analyses.params import AnalysisParams
from coca_eval.analyses.planes import as_complex, frequencies_of, plane_count, repeat_heads
from coca_eval.analyses.records import AngleDetail
from coca_eval.results import Cell

BINS = 36
TOLERANCE = 1e-6  # |Im| below this share of |w| is rounding: exactly collinear vectors are not anomalous


def sample_pairs(length: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` causal (query m, key n) position pairs, 0 <= n < m < length, seeded -> (c,), (c,)."""
    generator = torch.Generator().manual_seed(seed)
    m = torch.randint(1, length, (count,), generator=generator)  # (c,)
    n = (torch.rand(count, generator=generator) * m).long()  # (c,) uniform in [0, m)
    return m, n


def pair_products(q: torch.Tensor, k: torch.Tensor, planes: int, m, n, collinear: bool) -> torch.Tensor:
    """q_j(m) conj(key_j(m, n)) per head, pair and plane -> (h, c, P) complex; its angle is Theta_j.
    CoCA (``collinear``): k holds t with t_j = t_{j+P} >= 0, and key_j(m, n) = t_{n,j} q_j(m)."""
    zq = as_complex(q[0], planes)[:, m]  # (h, c, P)
    key = repeat_heads(k, q.shape[1])[0]  # (h, n, d)
    if collinear:
        return zq * (key[:, n, :planes].float() * zq).conj()  # (h, c, P)
    return zq * as_complex(key, planes)[:, n].conj()  # (h, c, P)


def reduce_layer(w: torch.Tensor, theta: torch.Tensor, length: int) -> dict[str, Any]:
    """Counts of one layer: anomalous and valid triples and capped tau sums per plane, Theta histogram."""
    size = w.abs()  # (h, c, P)
    valid = (size > 0) & (theta > 0)  # (h, c, P): a key to measure against, a plane that rotates
    angle = torch.angle(w).remainder(2 * math.pi)  # (h, c, P) in [0, 2 pi)
    anomalous = valid & (w.imag < -TOLERANCE * size)  # (h, c, P): Theta in (pi, 2 pi)
    tau = ((2 * math.pi - angle) / theta.clamp(min=1e-30)).clamp(max=length)  # (h, c, P) tokens affected
    hist = torch.histc(angle[valid].double(), bins=BINS, min=0.0, max=2 * math.pi)  # (BINS,)
    return {
        "anomalous": anomalous.sum(dim=(0, 1)).tolist(),  # (P,)
        "valid": valid.sum(dim=(0, 1)).tolist(),  # (P,)
        "tau": (tau * anomalous).sum(dim=(0, 1)).double().tolist(),  # (P,)
        "zero": int(((size == 0) & (theta > 0)).sum()),
        "hist": hist.tolist(),  # (BINS,)
    }


class AngleAnalysis:
    name, metric = "angles", "anomalous_share"

    def measure(self, backend: Any, ids: list[int], params: AnalysisParams, advance) -> dict:
        m, n = sample_pairs(len(ids), params.pairs, params.seed)
        layers, thetas, collinear = {}, {}, []

        def on_rope(layer, module, q, k, cos, sin):
            planes = plane_count(cos)
            theta = frequencies_of(cos, sin).float()  # (P,)
            coca = hasattr(module, "strict")  # CoCA's attention: k is the coefficient t
            w = pair_products(q, k, planes, m, n, coca)  # (h, c, P)
            layers[layer], thetas[layer] = reduce_layer(w, theta, len(ids)), theta.tolist()
            collinear.append(coca)

        observe(backend, ids, self.name, advance, on_rope)
        return {**layer_lists(self.name, layers=layers, theta=thetas), "collinear": any(collinear)}

    def combine(self, base: dict, parts: list[dict], params: AnalysisParams) -> Cell:
        def total(name: str) -> np.ndarray:
            return np.sum([[layer[name] for layer in p["layers"]] for p in parts], axis=0)  # (L, ...)

        anomalous, valid, tau = total("anomalous"), total("valid"), total("tau")  # (L, P) each
        theta = np.asarray(parts[0]["theta"])  # (L, P)
        by_layer = anomalous.sum(axis=1) / np.maximum(valid.sum(axis=1), 1)  # (L,)
        detail = AngleDetail(
            docs=len(parts),
            pairs=params.pairs,
            theta=theta.tolist(),
            share=(anomalous / np.maximum(valid, 1)).tolist(),
            share_by_layer=by_layer.tolist(),
            hist_edges=np.linspace(0, 2 * math.pi, BINS + 1).tolist(),
            hist=total("hist").tolist(),
            mean_tokens_affected=(tau.sum(axis=1) / np.maximum(anomalous.sum(axis=1), 1)).tolist(),
            zero_keys=int(total("zero").sum()),
            unrotated_planes=int((theta == 0).sum()),
            collinear=parts[0]["collinear"],
        )
        value = float(anomalous.sum() / max(valid.sum(), 1))
        return Cell(**base, value=value, n=int(valid.sum()), detail=detail.model_dump())
