"""The CoCA arithmetic shared by the LLaMA and GPT-NeoX decoders (§3 of "CoCA: Fusing Position Embedding with
Collinear Constrained Attention", and its reference code).

CoCA replaces the key k_n by k_{m,n} = q_m ∘ t_n (eq. 8): every key depends on the query looking at it,
so the paper's score (eq. 10) is an N x N x d object. Its dual form (Theorem 1, "slack", eq. 11) is

    logits(m, n) = Σ_i q_{m,i} · rope(q_m)_i · rope(t_n)_i / √d

which is an ordinary dot product between q'_m = q_m ∘ rope(q_m) and k'_n = rope(t_n). The fast path hands
(q', k') to whatever kernel the model uses (SDPA, flash, paged), so memory stays O(N) and the KV cache
simply holds rope(t). The eager path evaluates the same three-operand contraction the reference code
does, as one einsum, and is what ``output_attentions`` and ``attn_implementation="eager"`` get.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.llama.modeling_llama import repeat_kv


def collinear_coefficients(t: torch.Tensor) -> torch.Tensor:
    """t_proj output -> the non-negative coefficients t_n of eq. 7.

    RoPE in transformers rotates the pair (i, i + d/2) ("rotate half"), so the coefficient shared by a
    pair is the mean of the two halves, made non-negative by ReLU (eq. 7), then written back to both.
    """
    half = t.shape[-1] // 2
    shared = (t[..., :half] + t[..., half:]).mul_(0.5).relu_()  # (..., d/2)
    return torch.cat((shared, shared), dim=-1)  # (..., d)


def tie_query_halves(q: torch.Tensor) -> torch.Tensor:
    """The strict constraint of eq. 12 (q_i = q_{i+d/2}), met by averaging the two halves."""
    half = q.shape[-1] // 2
    shared = (q[..., :half] + q[..., half:]) / 2  # (..., d/2)
    return torch.cat((shared, shared), dim=-1)  # (..., d)


def _additive_mask(mask: torch.Tensor | None, q_len: int, kv_len: int, like: torch.Tensor) -> torch.Tensor:
    """Any mask transformers may pass (None = causal, bool = keep, float = additive) as an additive one."""
    lowest = torch.finfo(like.dtype).min
    if mask is None:
        if q_len == 1:
            return torch.zeros((), dtype=like.dtype, device=like.device)
        rows = torch.arange(q_len, device=like.device)[:, None] + (kv_len - q_len)  # (m, 1) query positions
        mask = rows >= torch.arange(kv_len, device=like.device)[None, :]  # (m, n) bottom-right causal
    if mask.dtype == torch.bool:
        return torch.zeros((), dtype=like.dtype, device=like.device).masked_fill(~mask, lowest)
    return mask.to(like.dtype)


def coca_eager_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    query_rot: torch.Tensor,
    key_rot: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    **_: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference contraction ``'bpnd,bpsd,bpnd->bpns'`` (q, rope(t), rope(q)), materialised.

    The operands are listed so that einsum's left-to-right order contracts q with rope(q) first, the
    path opt_einsum picks for the reference (Appendix C: condense d before expanding to N x N), so the
    largest tensors are the N x N scores and probabilities per head, as in the reference.
    """
    groups = getattr(module, "num_key_value_groups", 1)
    key_rot = repeat_kv(key_rot, groups)  # (b, h, n, d)
    value = repeat_kv(value, groups)  # (b, h, n, d)
    scores = torch.einsum("bhmd,bhmd,bhnd->bhmn", query, query_rot, key_rot).mul_(scaling)  # (b, h, m, n)
    scores.add_(_additive_mask(attention_mask, scores.shape[-2], scores.shape[-1], scores))  # (b, h, m, n)
    probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)  # (b, h, m, n)
    probs = F.dropout(probs, p=dropout, training=module.training)  # (b, h, m, n)
    out = torch.matmul(probs, value)  # (b, h, m, d)
    return out.transpose(1, 2).contiguous(), probs  # (b, m, h, d), (b, h, m, n)


def uses_eager_path(module: torch.nn.Module, kwargs: dict) -> bool:
    """Attention weights exist only on the eager path, so asking for them selects it, as transformers
    itself recommends for models whose fast kernel cannot return them."""
    wants_weights = kwargs.get("output_attentions") or module.config.output_attentions
    return module.config._attn_implementation in (None, "eager") or bool(wants_weights)


def coca_operands(
    module: torch.nn.Module,
    q: torch.Tensor,
    t: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    rope: Callable,
    kwargs: dict,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Projections q (b, h, n, d) and t (b, kv, n, d) -> (query, rope(q) or None, rope(t)).

    The eager path needs q and rope(q) apart: (q, rope(q), rope(t)). The fast path needs only their
    product: where the fused Triton kernel is selected and can run (:mod:`coca_eval.kernels`), it
    returns (q ∘ rope(q), None, rope(t)) in one launch; otherwise the torch ops run as they always did.
    ``module.strict`` picks the variant; ``rope`` is the model's own ``apply_rotary_pos_emb``.
    """
    from coca_eval.kernels import fused_transform_applies

    if not uses_eager_path(module, kwargs) and fused_transform_applies(q):
        from coca_eval.kernels.coca_transform import fused_coca_transform, kernel_supports

        if kernel_supports(q, t, cos.shape[-1]):
            query, key_rot = fused_coca_transform(q, t, cos, sin, module.strict)  # (b,h,n,d), (b,kv,n,d)
            return query, None, key_rot
    t = collinear_coefficients(t)  # (b, kv, n, d): t_i = t_{i+d/2} >= 0
    if module.strict:
        q = tie_query_halves(q)  # (b, h, n, d): q_i = q_{i+d/2}
    q_rot, t_rot = rope(q, t, cos, sin)  # (b, h, n, d), (b, kv, n, d)
    return q, q_rot, t_rot


def coca_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    query_rot: torch.Tensor | None,
    key_rot: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Route to the reference contraction or to the configured kernel with (q ∘ rope(q), rope(t)).

    ``query_rot`` is None when :func:`coca_operands` already formed the product (fused kernel).
    """
    if uses_eager_path(module, kwargs):
        return coca_eager_attention(module, query, query_rot, key_rot, value, attention_mask, **kwargs)
    kernel = ALL_ATTENTION_FUNCTIONS.get_interface(module.config._attn_implementation, sdpa_attention_forward)
    fast_query = query if query_rot is None else query * query_rot  # (b, h, n, d)
    return kernel(module, fast_query, key_rot, value, attention_mask, **kwargs)


def coca_layer_attention(
    module: torch.nn.Module,
    q: torch.Tensor,
    t: torch.Tensor,
    v: torch.Tensor,
    position_embeddings: tuple[torch.Tensor, torch.Tensor],
    rope: Callable,
    attention_mask: torch.Tensor | None,
    cache: Any,
    kwargs: dict,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One decoder layer's CoCA from its projections q (b, h, n, d), t and v (b, kv, n, d; kv = h for
    GPT-NeoX), whichever decoder they come from: the operands, the cache, then :func:`coca_attention`.

    The cache holds rope(t) where the stock decoder keeps rope(k); ``rope`` is the decoder's own
    ``apply_rotary_pos_emb`` (GPT-NeoX's rotates only the first ``rotary_ndims`` dims).
    """
    cos, sin = position_embeddings  # (b, n, rot) each; rot = d but for GPT-NeoX's partial rotary
    q, q_rot, t_rot = coca_operands(module, q, t, cos, sin, rope, kwargs)
    # q (b, h, n, d), q_rot (b, h, n, d) or None when fused into q, t_rot (b, kv, n, d); dims >= rot unrotated

    if cache is not None:
        t_rot, v = cache.update(t_rot, v, module.layer_idx)  # (b, kv, n_past + n, d) each

    return coca_attention(
        module,
        q,
        q_rot,
        t_rot,
        v,
        attention_mask,
        dropout=0.0 if not module.training else module.attention_dropout,
        scaling=module.scaling,
        **kwargs,
    )  # (b, n, h, d), (b, h, n, n_past + n) or None
