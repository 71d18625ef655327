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


def coca_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    query_rot: torch.Tensor,
    key_rot: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Route to the reference contraction or to the configured kernel with (q ∘ rope(q), rope(t)).

    Attention weights exist only on the eager path, so asking for them selects it, as transformers
    itself recommends for models whose fast kernel cannot return them.
    """
    implementation = module.config._attn_implementation
    wants_weights = kwargs.get("output_attentions") or module.config.output_attentions
    if implementation in (None, "eager") or wants_weights:
        return coca_eager_attention(module, query, query_rot, key_rot, value, attention_mask, **kwargs)
    kernel = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, sdpa_attention_forward)
    return kernel(module, query * query_rot, key_rot, value, attention_mask, **kwargs)
