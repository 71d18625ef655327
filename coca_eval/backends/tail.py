"""Run a decoder's last layer only for the rows that are scored.

In a strided window of L positions only the last S predict tokens that count. Every layer but the last
must still run on all L rows (their keys and values feed later layers), but the last layer's output is
read only at the scored rows. So the last layer computes keys and values for all rows and queries,
attention output, residuals and MLP only for the kept rows: about (L-S)/L of one layer less work,
with the same numbers up to float rounding (the backend probes this at load and falls back if not).

Two layer families qualify, each only with full causal attention in its last layer: plain LLaMA
(pre-norm, q/k/v/o projections, rotate-half RoPE, gated MLP) and Gemma 3 (the same plus per-head
q/k norms, norms after attention and around the MLP, and its own attention scale). Anything else runs
unchanged.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F

from coca_eval.models.layer_cache import layer_cache


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (b, h | kv, s | n, d), cos/sin (b, s | n, d)."""
    return x * cos.unsqueeze(1) + _rotate_half(x) * sin.unsqueeze(1)  # (b, h | kv, s | n, d)


def _is_plain_llama(layer: torch.nn.Module) -> bool:
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaDecoderLayer

    return type(layer) is LlamaDecoderLayer and type(layer.self_attn) is LlamaAttention


def _is_global_gemma3(layer: torch.nn.Module) -> bool:
    """A Gemma 3 layer with full causal attention and no attention-logit softcapping."""
    from transformers.models.gemma3.modeling_gemma3 import Gemma3Attention, Gemma3DecoderLayer

    attn = getattr(layer, "self_attn", None)
    return (
        type(layer) is Gemma3DecoderLayer
        and type(attn) is Gemma3Attention
        and attn.sliding_window is None
        and attn.is_causal
        and attn.attn_logit_softcapping is None
    )


def supports_tail_rows(model: torch.nn.Module) -> bool:
    """Whether the decoder's last layer is one this module knows how to run on a subset of rows."""
    layers = getattr(model.get_decoder(), "layers", None)
    if not layers:
        return False
    config = model.config.get_text_config()
    if _is_plain_llama(layers[-1]):
        return getattr(config, "sliding_window", None) is None
    return _is_global_gemma3(layers[-1])


def _attend_tail(layer: torch.nn.Module, normed: torch.Tensor, keep: int, cos, sin) -> torch.Tensor:
    """Self-attention output for the last ``keep`` rows, keys and values from all rows.

    normed (b, n, hidden), cos/sin (b, n, d); per-head q/k norms are applied where the layer has them.
    """
    attn = layer.self_attn
    batch, rows, _ = normed.shape  # (b, n, hidden)
    q = (
        attn.q_proj(normed[:, rows - keep :]).view(batch, keep, -1, attn.head_dim).transpose(1, 2)
    )  # (b, h, s, d)
    k = attn.k_proj(normed).view(batch, rows, -1, attn.head_dim).transpose(1, 2)  # (b, kv, n, d)
    v = attn.v_proj(normed).view(batch, rows, -1, attn.head_dim).transpose(1, 2)  # (b, kv, n, d)
    if hasattr(attn, "q_norm"):
        q, k = attn.q_norm(q), attn.k_norm(k)  # (b, h, s, d), (b, kv, n, d)
    q = _rope(q, cos[:, rows - keep :], sin[:, rows - keep :])  # (b, h, s, d)
    k = _rope(k, cos, sin)  # (b, kv, n, d)
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)  # (b, h, n, d)
    visible = torch.ones(keep, rows, dtype=torch.bool, device=q.device).tril(rows - keep)  # (s, n)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=attn.scaling)  # (b, h, s, d)
    return attn.o_proj(out.transpose(1, 2).reshape(batch, keep, -1))  # (b, s, hidden)


def _llama_tail(layer: torch.nn.Module, hidden: torch.Tensor, keep: int, cos, sin) -> torch.Tensor:
    """hidden (b, n, hidden) -> the layer's output at the last ``keep`` = s rows (b, s, hidden)."""
    attended = _attend_tail(layer, layer.input_layernorm(hidden), keep, cos, sin)  # (b, s, hidden)
    mid = hidden[:, hidden.shape[1] - keep :] + attended  # (b, s, hidden)
    return mid + layer.mlp(layer.post_attention_layernorm(mid))  # (b, s, hidden)


def _gemma3_tail(layer: torch.nn.Module, hidden: torch.Tensor, keep: int, cos, sin) -> torch.Tensor:
    """hidden (b, n, hidden) -> the layer's output at the last ``keep`` = s rows (b, s, hidden)."""
    attended = _attend_tail(layer, layer.input_layernorm(hidden), keep, cos, sin)  # (b, s, hidden)
    mid = hidden[:, hidden.shape[1] - keep :] + layer.post_attention_layernorm(attended)  # (b, s, hidden)
    fed = layer.mlp(layer.pre_feedforward_layernorm(mid))  # (b, s, hidden)
    return mid + layer.post_feedforward_layernorm(fed)  # (b, s, hidden)


class TailRowsLayer(torch.nn.Module):
    """Stands in for the last decoder layer and returns only its last ``keep`` rows."""

    def __init__(self, layer: torch.nn.Module, keep: int) -> None:
        super().__init__()
        self.layer, self.keep = layer, keep
        self.tail = _llama_tail if _is_plain_llama(layer) else _gemma3_tail

    def forward(self, hidden_states: torch.Tensor, position_embeddings=None, **kwargs) -> torch.Tensor:
        if (
            position_embeddings is None
            or layer_cache(kwargs.get("cache"), kwargs.get("past_key_values")) is not None
            or (kwargs.get("attention_mask") is not None)
        ):  # an unusual call: run the whole layer, keep the same output shape
            full = self.layer(
                hidden_states, position_embeddings=position_embeddings, **kwargs
            )  # (b, n, hidden)
            return full[:, full.shape[1] - self.keep :]  # (b, s, hidden)
        cos, sin = position_embeddings  # (b, n, d) each
        return self.tail(self.layer, hidden_states, self.keep, cos, sin)  # (b, s, hidden)


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
