"""ALiBi attention: the slopes of Press et al. and a causal attention with the bias -m_h·(i - j).

The bias is a function of i - j alone, so nothing depends on absolute positions: position ids are
ignored, and the query positions are the cache length plus the row index (keys are cache slots).

A dense N x N bias per head would cost O(N²) memory (4 GB per head at 32k in float32). Queries go
instead in blocks of at most ``block_rows`` rows, each attending (through SDPA with a float bias) to
the keys it can see, so memory is O(N · block). A short input is one call.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import repeat_kv

BLOCK_ROWS = 512  # query rows per SDPA call
BLOCK_ELEMENTS = 2**25  # at most this many bias entries per call (128 MB in float32), whatever the rows


@cache
def alibi_slopes(heads: int) -> tuple[float, ...]:
    """The head slopes m_1..m_h of the paper (§3 and its reference code).

    For h a power of two, the geometric sequence m_k = 2^(-8k/h), k = 1..h. Otherwise the h' = 2^⌊log2 h⌋
    slopes of h', then every other slope of 2h' (m_1, m_3, ... of that sequence) until there are h.
    """
    if heads < 1:
        raise ValueError(f"ALiBi needs at least one head, got {heads}")
    lower = 2 ** math.floor(math.log2(heads))
    slopes = [2.0 ** (-8.0 * k / lower) for k in range(1, lower + 1)]
    if lower == heads:
        return tuple(slopes)
    return tuple(slopes + list(alibi_slopes(2 * lower)[0::2][: heads - lower]))


def _keep_mask(attention_mask: torch.Tensor | None) -> torch.Tensor | None:
    """Whatever mask transformers passes (2-D padding, 4-D bool keep, 4-D additive float) as a 4-D bool
    keep mask (b, 1, m | 1, n); None when there is none (pure causal)."""
    if attention_mask is None:
        return None
    if attention_mask.dim() == 2:
        attention_mask = attention_mask[:, None, None, :]  # (b, 1, 1, n) padding only
    if attention_mask.dtype == torch.bool:
        return attention_mask
    if attention_mask.is_floating_point():
        return attention_mask > torch.finfo(attention_mask.dtype).min / 2  # (b, 1, m, n)
    return attention_mask != 0  # (b, 1, 1, n) integer padding mask


def alibi_bias(
    slopes: torch.Tensor, rows: torch.Tensor, keys: int, keep: torch.Tensor | None, dtype: torch.dtype
) -> torch.Tensor:
    """The additive bias (b | 1, h, r, k) of consecutive query positions ``rows`` (the last one sees key
    ``keys - 1``) against keys 0..keys-1: -m_h·(i - j) where j <= i and ``keep`` allows it, the dtype's
    lowest value elsewhere (not -inf: a fully masked padding row must give a finite softmax, not NaN).

    Built in one pass (the future is only the upper triangle of the last r columns), and always 4-D:
    CPU SDPA takes its fused kernel for a 4-D float mask but falls back to plain math for a 3-D one.
    """
    lowest, r, device = torch.finfo(dtype).min, rows.shape[0], rows.device
    offsets = (torch.arange(keys, device=device)[None, :] - rows[:, None]).float()  # (r, k) j - i
    bias = torch.empty(1, slopes.shape[0], r, keys, dtype=dtype, device=device)  # (1, h, r, k)
    torch.mul(offsets, slopes[:, None, None], out=bias[0])  # (h, r, k) exact in float32 up to 2^24
    future = torch.ones(r, r, dtype=torch.bool, device=device).triu_(1)  # (r, r)
    bias[..., keys - r :].masked_fill_(future, lowest)  # (1, h, r, r)
    return bias if keep is None else bias.masked_fill(~keep, lowest)  # (b | 1, h, r, k)


def _block_keep(keep: torch.Tensor | None, start: int, stop: int, visible: int) -> torch.Tensor | None:
    """The keep mask of query rows start..stop-1 against keys 0..visible-1 (a padding mask has one row)."""
    if keep is None:
        return None
    rows = keep if keep.shape[-2] == 1 else keep[..., start:stop, :]  # (b, 1, r | 1, n)
    return rows[..., :visible]  # (b, 1, r | 1, k)


def _attend_block(module, query, key, value, bias, scaling: float, dropout: float, eager: bool):
    """One block through SDPA with the float bias, or the explicit way returning the probabilities too
    (eager / ``output_attentions``)."""
    if not eager:
        p = dropout if module.training else 0.0
        return F.scaled_dot_product_attention(query, key, value, bias, p, scale=scaling), None  # (b, h, r, d)
    scores = torch.matmul(query, key.transpose(-1, -2)).mul_(scaling).add_(bias)  # (b, h, r, k)
    probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)  # (b, h, r, k)
    probs = F.dropout(probs, p=dropout, training=module.training)  # (b, h, r, k)
    return torch.matmul(probs, value), probs  # (b, h, r, d), (b, h, r, k)


def _wants_weights(module: torch.nn.Module, kwargs: dict) -> bool:
    """SDPA cannot return attention weights, so asking for them selects the explicit path (as CoCA does)."""
    implementation = module.config._attn_implementation
    return implementation in (None, "eager") or bool(
        kwargs.get("output_attentions") or module.config.output_attentions
    )


def alibi_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    first_row: int,
    scaling: float,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Causal ALiBi attention, block by block.

    query (b, h, m, d) sits at positions first_row..first_row+m-1 (first_row = tokens already cached),
    key/value (b, kv, n, d) at 0..n-1. Returns (b, m, h, d), and the weights (b, h, m, n) on the
    explicit path (``attn_implementation="eager"`` or ``output_attentions``), None otherwise.
    """
    groups = query.shape[1] // key.shape[1]
    key, value = repeat_kv(key, groups), repeat_kv(value, groups)  # (b, h, n, d) each
    batch, heads, m, _ = query.shape
    n = key.shape[2]
    slopes = torch.tensor(alibi_slopes(heads), device=query.device)  # (h,)
    keep = _keep_mask(attention_mask)  # (b, 1, m | 1, n) or None
    eager = _wants_weights(module, kwargs)
    step = max(1, min(module.block_rows, BLOCK_ELEMENTS // (batch * heads * n)))
    outs, weights = [], []
    for start in range(0, m, step):
        stop = min(m, start + step)
        visible = first_row + stop  # keys past the block's last query are all in its future
        rows = torch.arange(first_row + start, first_row + stop, device=query.device)  # (r,)
        bias = alibi_bias(slopes, rows, visible, _block_keep(keep, start, stop, visible), query.dtype)
        q, k, v = query[:, :, start:stop], key[:, :, :visible], value[:, :, :visible]  # (b, h, r | k, d)
        out, probs = _attend_block(module, q, k, v, bias, scaling, dropout, eager)  # (b, h, r, d)
        outs.append(out)
        if eager:
            weights.append(F.pad(probs, (0, n - visible)))  # (b, h, r, n)
    out = torch.cat(outs, dim=2) if len(outs) > 1 else outs[0]  # (b, h, m, d)
    return out.transpose(1, 2).contiguous(), torch.cat(weights, dim=2) if eager else None  # (b, m, h, d)
