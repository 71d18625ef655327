"""Typed ``detail`` of the analyses' cells: what ``report`` and other tools may read, validated both
when a cell is made and when a results file is loaded (a hand-edited file fails in one line)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Matrix = list[list[float]]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NormMaps(_Record):
    """Mean 2-norm per (row, rotary plane) of queries, keys (CoCA: t) and values; rows are layers
    (mean over heads) or heads (of one layer); plane 0 is the highest frequency."""

    q: Matrix
    k: Matrix
    v: Matrix


class LayerShares(_Record):
    """Share of a layer's summed plane norms in its lowest and highest quarter of frequencies."""

    q_low: list[float]
    q_high: list[float]
    k_low: list[float]
    k_high: list[float]


class FrequencyDetail(_Record):
    docs: int
    theta: Matrix  # (layers, planes) radians per token
    layers: NormMaps  # (layers, planes)
    heads: dict[str, NormMaps]  # layer index -> (heads, planes)
    shares: LayerShares
    dominant_planes: dict[str, list[int]]  # "L/q", "L/k": fewest planes holding 90 % of the norm
    collinear: bool  # CoCA: keys are the non-negative coefficients t


class AngleDetail(_Record):
    docs: int
    pairs: int  # (query, key) position pairs per document and layer
    theta: Matrix  # (layers, planes)
    share: Matrix  # (layers, planes) anomalous share of valid triples
    share_by_layer: list[float]
    hist_edges: list[float]  # radians, [0, 2 pi]
    hist: Matrix  # (layers, bins) counts of Theta over heads and planes
    mean_tokens_affected: list[float]  # per layer: mean tau (capped at the length) of anomalous triples
    zero_keys: int  # triples whose key is 0 in the plane (CoCA where t = 0): no angle
    unrotated_planes: int  # planes with theta = 0 (p-RoPE): never anomalous, not counted
    collinear: bool


class Geometry(_Record):
    """Closed-form curves for one set of frequencies (layers sharing it)."""

    layers: list[int]
    theta: list[float]
    attention_scaling: float
    roformer: list[float]
    coca: list[float]
    all_ones: list[float]
    gaussian: list[float]
    random_positions: list[float]
    random_bound: int


class DecayDetail(_Record):
    docs: int
    distances: list[int]  # x of the closed forms
    geometries: list[Geometry]
    edges: list[int]  # measured: distance bins [edges[i], edges[i+1])
    measured: Matrix  # (layers, bins) mean raw logit (heads, queries) per distance bin
    measured_mean: list[float]  # mean over layers


class AttentionDetail(_Record):
    docs: int
    near: int
    last_rows: int
    max_logit: Matrix  # (layers, heads), max over documents
    near_mass: Matrix  # (layers, heads), mean over documents
    outliers: list[dict[str, float]]  # {layer, head, max_logit, ratio}
    trained_context: int | None
