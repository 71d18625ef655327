"""Sliding-window attention computed band by band while scoring whole windows.

transformers runs a sliding-window layer through SDPA with a dense (n, n) boolean mask. The kernel
cannot skip what the mask hides, so a sliding layer costs at least as much as a full causal one: at
N = 2048 and a 512-token window, four times the visible scores; at N = 32k, sixty-four times. While the
backend scores windows (no KV cache, no padding) it routes SDPA through :func:`banded_attention`:
queries go in blocks of ``BLOCK_ROWS`` rows and each block attends only to the keys its rows can see,
[start - window + 1, stop). Full-attention layers, decoding steps and anything else go to transformers'
own SDPA function unchanged. The backend probes the result against plain SDPA at load (a probe longer
than the window) and keeps the plain path if they differ.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F

BLOCK_ROWS = 128
PROBE_WINDOW_LIMIT = 1024  # longer windows would need a probe too slow to run at load time on CPU


def _sdpa():
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward


def banded_attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' attention-function signature; query (b, h, n, d), key/value (b, kv, n, d) ->
    ((b, n, h, d), None). Only sliding layers over a whole window take the banded path."""
    window = kwargs.get("sliding_window")
    rows = query.shape[2]
    if window is None or rows != key.shape[2] or rows <= window or dropout or kwargs.get("softcap"):
        return _sdpa()(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)  # (b, h, n, d)
    out = torch.empty_like(query)  # (b, h, n, d)
    for start in range(0, rows, BLOCK_ROWS):
        stop, first = min(rows, start + BLOCK_ROWS), max(0, start - window + 1)
        q_pos = torch.arange(start, stop, device=query.device).unsqueeze(1)  # (r, 1)
        k_pos = torch.arange(first, stop, device=query.device).unsqueeze(0)  # (1, k)
        visible = (k_pos <= q_pos) & (k_pos > q_pos - window)  # (r, k), transformers' sliding rule
        out[:, :, start:stop] = F.scaled_dot_product_attention(
            query[:, :, start:stop], key[:, :, first:stop], value[:, :, first:stop], visible, scale=scaling
        )  # (b, h, r, d)
    return out.transpose(1, 2).contiguous(), None  # (b, n, h, d)


def sliding_windows(model: torch.nn.Module) -> set[int]:
    """The sliding-window sizes of the model's attention modules (empty: none slides)."""
    return {
        module.sliding_window
        for module in model.modules()
        if isinstance(getattr(module, "sliding_window", None), int) and hasattr(module, "o_proj")
    }


def may_band(model: torch.nn.Module) -> bool:
    """Whether banding could apply: SDPA attention and sliding windows short enough to probe."""
    windows = sliding_windows(model)
    return (
        model.config.get_text_config()._attn_implementation == "sdpa"
        and bool(windows)
        and max(windows) <= PROBE_WINDOW_LIMIT
    )


@contextmanager
def banded_sdpa(enabled: bool = True):
    """Within the block, models using transformers' ``sdpa`` attention run :func:`banded_attention`."""
    if not enabled:
        yield
        return
    from coca_eval.models.sdpa_swap import sdpa_swapped

    with sdpa_swapped(lambda previous: banded_attention):
        yield
