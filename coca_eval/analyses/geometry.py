"""``analyze decay`` without a model: the closed-form curves for a rotary geometry a user describes
(base, head dimension, rope patch, p-RoPE fraction), the way RoFormer's Fig 2 and the p-RoPE paper's
Fig 2 and 8 are drawn, so a patch can be compared before any checkpoint exists.

The frequencies are not re-derived here: a one-head LLaMA config is patched with the project's own
``--rope`` code and its rotary embedding (p-RoPE: the project's frequency cut) is run over the analysed
length, so dynamic NTK is read at that length and YaRN's attention factor is the one it applies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from coca_eval.analyses import closed_forms as cf
from coca_eval.analyses.planes import attention_scaling, frequencies_of
from coca_eval.analyses.records import DecayDetail, Geometry
from coca_eval.errors import CocaEvalError
from coca_eval.models.rope import RopePatch, apply_rope_patch
from coca_eval.results import Cell, Run

METRIC = "bound_left"  # RoFormer's relative bound at the farthest distance over its value at distance 0


@dataclass(frozen=True)
class RotaryGeometry:
    """What fixes a rotary table: ``base`` (theta), ``head_dim``, the share of planes that rotate
    (p-RoPE keeps the highest ``rope_fraction``) and the trained length that PI/YaRN/dynamic refer to."""

    head_dim: int
    base: float = 10000.0
    rope_fraction: float = 1.0
    trained_length: int = 2048

    def __post_init__(self) -> None:
        if self.head_dim < 2 or self.head_dim % 2:
            raise CocaEvalError(f"--head-dim must be an even number of at least 2 (got {self.head_dim})")
        if self.base <= 1:
            raise CocaEvalError(f"--base must be above 1 (got {self.base:g})")
        if not 0.0 <= self.rope_fraction <= 1.0:
            raise CocaEvalError(f"--rope-fraction must lie in [0, 1] (got {self.rope_fraction:g})")
        if self.trained_length < 2:
            raise CocaEvalError(f"--trained-length must be at least 2 (got {self.trained_length})")


def rotary_table(geometry: RotaryGeometry, patch: RopePatch, length: int) -> tuple[np.ndarray, float]:
    """theta_j (P,) and the attention factor that ``patch`` gives ``geometry`` at ``length`` tokens."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    from coca_eval.models.frequencies import HighestFrequenciesLlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=geometry.head_dim,
        num_attention_heads=1,
        head_dim=geometry.head_dim,
        max_position_embeddings=geometry.trained_length,
        rope_parameters={"rope_type": "default", "rope_theta": geometry.base},
    )
    config = apply_rope_patch(config, patch)
    config.rope_fraction = geometry.rope_fraction
    cut = geometry.rope_fraction < 1.0
    rotary = (HighestFrequenciesLlamaRotaryEmbedding if cut else LlamaRotaryEmbedding)(config)
    positions = torch.arange(length)[None]  # (1, n): dynamic NTK sees the full length
    cos, sin = rotary(torch.zeros(1, length, geometry.head_dim), positions)  # (1, n, d) each
    return frequencies_of(cos, sin).numpy(), attention_scaling(cos, sin)


def closed_form_geometry(theta: np.ndarray, scaling: float, layers: list[int], length: int,
                         samples: int, seed: int, random_bound: int | None) -> Geometry:  # fmt: skip
    """Every closed-form curve of :mod:`closed_forms` for one frequency table, on the shared grid."""
    distances = cf.distance_grid(length)
    bound = random_bound or 4 * length
    return Geometry(
        layers=layers,
        theta=theta.tolist(),
        attention_scaling=scaling,
        roformer=cf.relative_bound(theta, distances).tolist(),
        coca=cf.coca_bound(theta, distances).tolist(),
        all_ones=cf.all_ones(theta, distances).tolist(),
        gaussian=cf.gaussian(theta, distances, samples, seed).tolist(),
        random_positions=cf.random_positions(theta, distances, length, bound).tolist(),
        random_bound=bound,
    )


def geometry_label(geometry: RotaryGeometry, patch: RopePatch) -> str:
    """A row name that says the whole geometry, e.g. ``theta=10000 d=64 p=0.75, PI x4``."""
    text = f"theta={geometry.base:g} d={geometry.head_dim}"
    if geometry.rope_fraction < 1.0:
        text += f" p={geometry.rope_fraction:g}"
    return f"{text}, {patch.label}" if patch.label else text


def closed_form_cell(geometry: RotaryGeometry, patch: RopePatch, length: int, samples: int, seed: int,
                     random_bound: int | None) -> Cell:  # fmt: skip
    """One (patch, length) cell: the curves in ``detail`` (no measured part), the bound left as value."""
    theta, scaling = rotary_table(geometry, patch, length)
    curves = closed_form_geometry(theta, scaling, [], length, samples, seed, random_bound)
    detail = DecayDetail(
        docs=0,
        distances=cf.distance_grid(length).tolist(),
        geometries=[curves],
        edges=[],
        measured=[],
        measured_mean=[],
    )
    value = curves.roformer[-1] / curves.roformer[0]
    label = geometry_label(geometry, patch)
    return Cell(task="decay", method=label, metric=METRIC, length=length, value=value, n=0,
                detail=detail.model_dump())  # fmt: skip


def closed_form_run(geometry: RotaryGeometry, patches: list[RopePatch], lengths: tuple[int, ...],
                    samples: int, seed: int, random_bound: int | None) -> Run:  # fmt: skip
    """The model-free decay run: one cell per (patch, length); instant, so nothing is journaled."""
    from coca_eval.provenance import code_provenance

    cells = [
        closed_form_cell(geometry, patch, length, samples, seed, random_bound)
        for patch in patches
        for length in lengths
    ]
    params = {"analysis": "decay", "geometry": asdict(geometry), "lengths": list(lengths),
              "samples": samples, "seed": seed, "random_bound": random_bound}  # fmt: skip
    methods = [{"label": geometry_label(geometry, p), "rope": p.spec} for p in patches]
    config = {"task": "decay", "task_version": 1, "params": params, "methods": methods}
    return Run(**code_provenance(), config=config, cells=cells)
