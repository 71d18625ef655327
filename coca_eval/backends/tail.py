"""Run a LLaMA-style model's last decoder layer only for the rows that are scored.

In a strided window of L positions only the last S predict tokens that count. Every layer but the last
must still run on all L rows (their keys and values feed later layers), but the last layer's output is
read only at the scored rows. So the last layer computes keys and values for all rows and queries,
attention output, residuals and MLP only for the kept rows: about (L-S)/L of one layer less work,
with the same numbers up to float rounding (the backend probes this at load and falls back if not).

Only plain LLaMA layers qualify (RMSNorm, q/k/v/o projections, rotate-half RoPE, gated MLP, full
causal attention); anything else runs unchanged.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, h, n, d], cos/sin [B, n, d]."""
    return x * cos.unsqueeze(1) + _rotate_half(x) * sin.unsqueeze(1)  # [B, h, n, d]


def supports_tail_rows(model: torch.nn.Module) -> bool:
    """Whether the decoder's last layer is a plain LLaMA layer with full causal attention."""
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaDecoderLayer

    layers = getattr(model.get_decoder(), "layers", None)
    if not layers:
        return False
    last = layers[-1]
    config = model.config.get_text_config()
    return (
        type(last) is LlamaDecoderLayer
        and type(last.self_attn) is LlamaAttention
        and getattr(config, "sliding_window", None) is None
    )


class TailRowsLayer(torch.nn.Module):
    """Stands in for the last decoder layer and returns only its last ``keep`` rows."""

    def __init__(self, layer: torch.nn.Module, keep: int) -> None:
        super().__init__()
        self.layer, self.keep = layer, keep

    def forward(self, hidden_states: torch.Tensor, position_embeddings=None, **kwargs) -> torch.Tensor:
        if (
            position_embeddings is None
            or kwargs.get("past_key_values") is not None
            or (kwargs.get("attention_mask") is not None)
        ):  # an unusual call: run the whole layer, keep the same output shape
            full = self.layer(hidden_states, position_embeddings=position_embeddings, **kwargs)  # [B, N, H]
            return full[:, full.shape[1] - self.keep :]  # [B, K, H]
        layer, attn, keep = self.layer, self.layer.self_attn, self.keep
        batch, rows, _ = hidden_states.shape  # [B, N, H]
        cos, sin = position_embeddings  # [B, N, d] each
        normed = layer.input_layernorm(hidden_states)  # [B, N, H]
        tail = normed[:, rows - keep :]  # [B, K, H]
        q = attn.q_proj(tail).view(batch, keep, -1, attn.head_dim).transpose(1, 2)  # [B, h, K, d]
        k = attn.k_proj(normed).view(batch, rows, -1, attn.head_dim).transpose(1, 2)  # [B, kv, N, d]
        v = attn.v_proj(normed).view(batch, rows, -1, attn.head_dim).transpose(1, 2)  # [B, kv, N, d]
        q = _rope(q, cos[:, rows - keep :], sin[:, rows - keep :])  # [B, h, K, d]
        k = _rope(k, cos, sin)  # [B, kv, N, d]
        groups = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)  # [B, h, N, d]
        visible = torch.ones(keep, rows, dtype=torch.bool, device=q.device).tril(rows - keep)  # [K, N]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=attn.scaling)  # [B, h, K, d]
        out = attn.o_proj(out.transpose(1, 2).reshape(batch, keep, -1))  # [B, K, H]
        hidden = hidden_states[:, rows - keep :] + out  # [B, K, H]
        return hidden + layer.mlp(layer.post_attention_layernorm(hidden))  # [B, K, H]


@contextmanager
def tail_rows(model: torch.nn.Module, keep: int):
    """Within the block the decoder's ``last_hidden_state`` holds only the last ``keep`` rows."""
    layers = model.get_decoder().layers
    original = layers[-1]
    layers[-1] = TailRowsLayer(original, keep)
    try:
        yield
    finally:
        layers[-1] = original
