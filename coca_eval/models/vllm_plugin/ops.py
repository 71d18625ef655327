"""The CoCA arithmetic on vLLM's flat token layout [T, heads * d], shared by both vLLM models.

The coefficient and strict-query rules are the very functions the transformers models use
(:mod:`coca_eval.models.coca.attention`), applied per head; the rotation is vLLM's own rotary
embedding, so every rope type vLLM knows rotates q and t alike.
"""

from __future__ import annotations

import copy

import torch

from coca_eval.models.coca.attention import collinear_coefficients, tie_query_halves


def per_head(fn, x: torch.Tensor, head_dim: int) -> torch.Tensor:
    """Apply a last-dimension rule to every head of a flat [T, heads * d] tensor."""
    return fn(x.view(x.shape[0], -1, head_dim)).reshape(x.shape)  # [T, heads * d]


def coca_query_key(
    q: torch.Tensor, t: torch.Tensor, positions: torch.Tensor, rotary, head_dim: int, strict: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """(q ∘ rope(q), rope(t)) from the raw projections q [T, h*d] and t [T, kv*d]: what vLLM's attention
    layer and paged KV cache receive in place of (rope(q), rope(k))."""
    t = per_head(collinear_coefficients, t, head_dim)  # [T, kv*d]: t_i = t_{i+d/2} >= 0
    if strict:
        q = per_head(tie_query_halves, q, head_dim)  # [T, h*d]: q_i = q_{i+d/2}
    q_rot, t_rot = rotary(positions, q.clone(), t)  # [T, h*d], [T, kv*d]; kernels rotate in place
    return q * q_rot, t_rot  # [T, h*d], [T, kv*d]


def with_rope_fraction(rotary: torch.nn.Module, fraction: float) -> torch.nn.Module:
    """p-RoPE on a vLLM rotary embedding: the lowest ``1 - fraction`` frequencies stop rotating.

    vLLM shares rotary modules between models with equal rope settings, so the cut goes on a private
    copy. Its table is [positions, cos | sin] with rotary_dim/2 columns each (any scaling already folded
    in); a frozen frequency keeps its position-0 values (cos = the rope's attention scaling, sin = 0),
    exactly what the transformers models do with their final cos/sin.
    """
    half = rotary.rotary_dim // 2
    kept = int(fraction * rotary.rotary_dim // 2)
    if kept >= half:
        return rotary
    rotary = copy.deepcopy(rotary)
    cache = rotary.cos_sin_cache.clone()  # [P, rotary_dim]
    cache[:, kept:half] = cache[0, kept:half]  # cos of frozen frequencies: the position-0 value
    cache[:, half + kept :] = 0.0  # sin of frozen frequencies
    rotary.cos_sin_cache = cache
    return rotary
