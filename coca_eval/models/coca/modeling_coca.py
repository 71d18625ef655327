"""LLaMA-CoCA: transformers' LLaMA decoder with the attention swapped for Collinear Constrained Attention.

Everything except attention is transformers' own LLaMA (RMSNorm, SwiGLU MLP, GQA, rotary embedding with
every rope type and ``rope_parameters`` patch), so the model loads, generates and caches like LLaMA. The
state dict matches the reference LLaMA-CoCA checkpoints: ``self_attn.t_proj`` sits where ``k_proj`` was,
with the same shape (one coefficient vector per key/value head).
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LlamaForCausalLM
from transformers.cache_utils import Cache
from transformers.models.llama.modeling_llama import (
    LlamaAttention,
    apply_rotary_pos_emb,
)

from coca_eval.models.coca.attention import (
    coca_attention,
    coca_operands,
)
from coca_eval.models.coca.configuration_coca import CocaLlamaConfig
from coca_eval.models.frequencies import HighestFrequenciesLlamaRotaryEmbedding
from coca_eval.models.layer_cache import layer_cache


class CocaLlamaAttention(LlamaAttention):
    """LLaMA attention whose key is q ∘ t (eq. 8), computed through its dual form (eq. 11).

    Subclassing keeps LLaMA's projections, scaling and head bookkeeping, and keeps transformers'
    ``output_attentions`` recorder (it looks for ``LlamaAttention`` instances) working.
    """

    def __init__(self, config: CocaLlamaConfig, layer_idx: int) -> None:
        super().__init__(config, layer_idx)
        self.t_proj = self.k_proj  # same shape as the key projection it replaces
        del self.k_proj
        self.strict = config.coca_variant == "strict"

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: tuple[torch.Tensor, torch.Tensor],
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        cache: Cache | None = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        cache = layer_cache(cache, past_key_values)
        input_shape = hidden_states.shape[:-1]  # (b, n)
        hidden_shape = (*input_shape, -1, self.head_dim)  # (b, n, h | kv, d)

        q = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, h, n, d)
        t = self.t_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)

        cos, sin = position_embeddings  # (b, n, d) each
        q, q_rot, t_rot = coca_operands(self, q, t, cos, sin, apply_rotary_pos_emb, kwargs)
        # q (b, h, n, d), q_rot (b, h, n, d) or None when fused into q, t_rot (b, kv, n, d)

        if cache is not None:  # the cache holds rope(t) where LLaMA keeps rope(k)
            t_rot, v = cache.update(t_rot, v, self.layer_idx)  # (b, kv, n_past + n, d) each

        out, weights = coca_attention(
            self,
            q,
            q_rot,
            t_rot,
            v,
            attention_mask,
            dropout=0.0 if not self.training else self.attention_dropout,
            scaling=self.scaling,
            **kwargs,
        )  # (b, n, h, d), (b, h, n, n_past + n) or None
        out = self.o_proj(out.reshape(*input_shape, -1).contiguous())  # (b, n, hidden)
        return out, weights


class CocaLlamaForCausalLM(LlamaForCausalLM):
    """``LlamaForCausalLM`` with CoCA attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = CocaLlamaConfig

    def __init__(self, config: CocaLlamaConfig) -> None:
        super().__init__(config)
        for layer in self.model.layers:
            layer.self_attn = CocaLlamaAttention(config, layer.self_attn.layer_idx)
        self.model.rotary_emb = HighestFrequenciesLlamaRotaryEmbedding(config)
        self.post_init()  # initialises only the modules just swapped in
