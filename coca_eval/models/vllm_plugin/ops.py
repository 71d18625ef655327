"""The CoCA arithmetic on vLLM's flat token layout (T, h*d), shared by both vLLM models.

The transformers models compute the coefficient of eq. 7 at run time: the mean of each rotation pair
(i, i + d/2) of t, ReLU, written back to both halves (and, strict, the same mean for q, eq. 12). Both
means are linear in the projection, so the vLLM models fold them into the weights at load time
(:func:`fold_pair_means_`): the projection then yields both halves equal, and each forward pass only
needs a ReLU on t, one copy of q and one product: three elementwise kernels per layer instead of six
(nine strict),
which matters at decode time when a step is a few small matmuls. The rotation is vLLM's own rotary
embedding, so every rope type vLLM knows rotates q and t alike.
"""

from __future__ import annotations

import copy

import torch

# vLLM rotary classes whose forward is exactly "look up [cos | sin] by position, rotate half" (the
# scaled variants only build a different table), so the fused kernel may replace it.
FUSABLE_ROTARY_TYPES = frozenset(
    {
        "RotaryEmbedding",
        "LinearScalingRotaryEmbedding",
        "DynamicNTKScalingRotaryEmbedding",
        "YaRNScalingRotaryEmbedding",
        "Llama3RotaryEmbedding",
        "NTKScalingRotaryEmbedding",
    }
)


def fold_pair_means_(rows: torch.Tensor, head_dim: int, axis: int = 0) -> None:
    """In place: in every head of ``rows`` (weight or bias rows; axis ``axis`` holds heads * d of them),
    rows i and i + d/2 both become their mean, so the projection outputs the pair mean in both halves."""
    if not rows.is_floating_point():
        raise ValueError("CoCA under vLLM needs unquantized q/t projections")
    pairs = rows.unflatten(axis, (-1, 2, head_dim // 2))  # (..., h | kv, 2, d/2, ...), a view
    pairs.copy_(pairs.mean(dim=axis + 1, keepdim=True).expand_as(pairs))


def fold_coca_projection_(
    weight: torch.Tensor, bias, q_rows: slice, t_rows: slice, head_dim: int, strict: bool
):
    """Fold the coefficient means into the t rows (and, strict, the query means into the q rows)."""
    for rows in (t_rows, q_rows) if strict else (t_rows,):
        for param in (weight, bias) if bias is not None else (weight,):
            fold_pair_means_(param.data[rows], head_dim)


def coca_query_key(
    q: torch.Tensor, t: torch.Tensor, positions: torch.Tensor, rotary
) -> tuple[torch.Tensor, torch.Tensor]:
    """(q ∘ rope(q), rope(relu(t))) from projections q (T, h*d) and t (T, kv*d) whose pair halves are
    already equal (weights folded at load): what vLLM's attention layer and paged KV cache receive in
    place of (rope(q), rope(k)). Where the fused Triton kernel is selected (:mod:`coca_eval.kernels`)
    and the rotary embedding is a plain rotate-half table, one launch computes both before the cache
    write; other rotary types keep vLLM's own rotation below."""
    if fused_rotary_applies(q, rotary):
        from coca_eval.kernels.coca_transform import fused_coca_query_key_flat

        return fused_coca_query_key_flat(q, t, positions, rotary.cos_sin_cache, rotary.head_size)
    t = t.relu_()  # (T, kv*d): the coefficients t_i = t_{i+d/2} >= 0
    q_rot, t_rot = rotary(positions, q.clone(), t)  # (T, h*d), (T, kv*d); kernels rotate in place
    return q_rot.mul_(q), t_rot  # (T, h*d), (T, kv*d)


def fused_rotary_applies(q: torch.Tensor, rotary) -> bool:
    """The fused kernel is selected and can run, and ``rotary`` is vLLM's plain rotate-half rope: a
    [positions, cos | sin] table looked up by position (any scaling folded into it). Multimodal,
    interleaved (GPT-J) and per-call rescaling ropes have their own forward and keep it."""
    from coca_eval.kernels import fused_transform_applies

    if not fused_transform_applies(q) or not getattr(rotary, "is_neox_style", False):
        return False
    cache = getattr(rotary, "cos_sin_cache", None)
    known = type(rotary).__name__ in FUSABLE_ROTARY_TYPES
    return known and cache is not None and cache.shape[-1] == rotary.rotary_dim and rotary.rotary_dim > 0


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
    cache = rotary.cos_sin_cache.clone()  # (max_pos, rot)
    cache[:, kept:half] = cache[0, kept:half]  # cos of frozen frequencies: the position-0 value
    cache[:, half + kept :] = 0.0  # sin of frozen frequencies
    rotary.cos_sin_cache = cache
    return rotary
