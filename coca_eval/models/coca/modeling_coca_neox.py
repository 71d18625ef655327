"""NeoX-CoCA: transformers' GPT-NeoX decoder with Collinear Constrained Attention.

Everything except attention is transformers' own GPT-NeoX (LayerNorm, parallel residual, GELU MLP,
partial rotary ``rotary_pct``, every rope type). The fused ``query_key_value`` projection keeps its
name and layout, per head [q | t | v], so the middle third of each head is t, as in the reference
NeoX-CoCA checkpoints, which therefore load without any weight surgery.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import GPTNeoXForCausalLM
from transformers.cache_utils import Cache
from transformers.models.gpt_neox.modeling_gpt_neox import (
    GPTNeoXAttention,
    GPTNeoXRotaryEmbedding,
    apply_rotary_pos_emb,
)

from coca_eval.models.coca.attention import coca_layer_attention
from coca_eval.models.coca.configuration_coca import CocaNeoXConfig
from coca_eval.models.frequencies import HighestFrequenciesMixin
from coca_eval.models.swapped import SwappedAttentionModel


class CocaNeoXAttention(GPTNeoXAttention):
    """GPT-NeoX attention computing the CoCA score; rope touches only the first ``rotary_ndims`` dims.

    The identity q'·k' = Σ q ∘ rope(q) ∘ rope(t) holds dimension by dimension, so the unrotated dims
    simply contribute q_i² t_i. As in the reference, t's halves are paired over the whole head.
    """

    def __init__(self, config: CocaNeoXConfig, layer_idx: int) -> None:
        super().__init__(config, layer_idx)
        self.strict = config.coca_variant == "strict"

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None,
        layer_past: Cache | None = None,
        position_embeddings: tuple[torch.Tensor, torch.Tensor] | None = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        input_shape = hidden_states.shape[:-1]  # (b, n)
        hidden_shape = (*input_shape, -1, 3 * self.head_size)  # (b, n, h, 3d)

        qtv = self.query_key_value(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, h, n, 3d)
        q, t, v = qtv.chunk(3, dim=-1)  # (b, h, n, d) each; t is the middle third

        out, weights = coca_layer_attention(
            self, q, t, v, position_embeddings, apply_rotary_pos_emb, attention_mask, layer_past, kwargs
        )  # (b, n, h, d), (b, h, n, n_past + n) or None
        out = self.dense(out.reshape(*input_shape, -1).contiguous())  # (b, n, hidden)
        return out, weights


class CocaNeoXRotaryEmbedding(HighestFrequenciesMixin, GPTNeoXRotaryEmbedding):
    """GPT-NeoX's rotary table (any rope type) with p-RoPE's frequency cut applied once per forward."""


class CocaNeoXForCausalLM(SwappedAttentionModel, GPTNeoXForCausalLM):
    """``GPTNeoXForCausalLM`` with CoCA attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = CocaNeoXConfig
    attention_class = CocaNeoXAttention
    backbone_name, attention_name = "gpt_neox", "attention"

    def rotary_table(self, config: Any) -> torch.nn.Module:
        return CocaNeoXRotaryEmbedding(config)
