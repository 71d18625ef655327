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
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from coca_eval.models.coca.attention import coca_layer_attention
from coca_eval.models.coca.configuration_coca import CocaLlamaConfig
from coca_eval.models.frequencies import HighestFrequenciesLlamaRotaryEmbedding
from coca_eval.models.swapped import SwappedAttentionModel, SwappedLlamaAttention


class CocaLlamaAttention(SwappedLlamaAttention):
    """LLaMA attention whose key is q ∘ t (eq. 8), computed through its dual form (eq. 11).

    The projections, the cache keyword and the output projection are LLaMA's
    (:class:`~coca_eval.models.swapped.SwappedLlamaAttention`); t is projected by ``t_proj``.
    """

    key_name = "t_proj"

    def __init__(self, config: CocaLlamaConfig, layer_idx: int) -> None:
        super().__init__(config, layer_idx)
        self.t_proj = self.k_proj  # same shape as the key projection it replaces
        del self.k_proj
        self.strict = config.coca_variant == "strict"

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        position_embeddings: tuple[torch.Tensor, torch.Tensor],
        attention_mask: torch.Tensor | None,
        cache: Cache | None,
        kwargs: dict,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """CoCA of q (b, h, n, d) with t = ``k`` (b, kv, n, d); the cache holds rope(t)."""
        return coca_layer_attention(
            self, q, k, v, position_embeddings, apply_rotary_pos_emb, attention_mask, cache, kwargs
        )  # (b, n, h, d), (b, h, n, n_past + n) or None


class CocaLlamaForCausalLM(SwappedAttentionModel, LlamaForCausalLM):
    """``LlamaForCausalLM`` with CoCA attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = CocaLlamaConfig
    attention_class = CocaLlamaAttention

    def rotary_table(self, config: Any) -> torch.nn.Module:
        return HighestFrequenciesLlamaRotaryEmbedding(config)
