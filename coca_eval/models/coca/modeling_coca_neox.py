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

from coca_eval.models.coca.attention import (
    coca_attention,
    coca_operands,
)
from coca_eval.models.coca.configuration_coca import CocaNeoXConfig
from coca_eval.models.frequencies import HighestFrequenciesMixin


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

        cos, sin = position_embeddings  # (b, n, rot) each, rot = rotary_ndims
        q, q_rot, t_rot = coca_operands(self, q, t, cos, sin, apply_rotary_pos_emb, kwargs)
        # q (b, h, n, d), q_rot (b, h, n, d) or None (fused into q), t_rot (b, h, n, d); dims >= rot unrotated

        if layer_past is not None:  # the cache holds rope(t) where GPT-NeoX keeps rope(k)
            t_rot, v = layer_past.update(t_rot, v, self.layer_idx)  # (b, h, n_past + n, d) each

        out, weights = coca_attention(
            self,
            q,
            q_rot,
            t_rot,
            v,
            attention_mask,
            scaling=self.scaling,
            dropout=0.0 if not self.training else self.attention_dropout,
            **kwargs,
        )  # (b, n, h, d), (b, h, n, n_past + n) or None
        out = self.dense(out.reshape(*input_shape, -1).contiguous())  # (b, n, hidden)
        return out, weights


class CocaNeoXRotaryEmbedding(HighestFrequenciesMixin, GPTNeoXRotaryEmbedding):
    """GPT-NeoX's rotary table (any rope type) with p-RoPE's frequency cut applied once per forward."""


class CocaNeoXForCausalLM(GPTNeoXForCausalLM):
    """``GPTNeoXForCausalLM`` with CoCA attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = CocaNeoXConfig

    def __init__(self, config: CocaNeoXConfig) -> None:
        super().__init__(config)
        for layer in self.gpt_neox.layers:
            layer.attention = CocaNeoXAttention(config, layer.attention.layer_idx)
        self.gpt_neox.rotary_emb = CocaNeoXRotaryEmbedding(config)
        self.post_init()  # initialises only the modules just swapped in
