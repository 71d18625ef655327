"""ALiBi LLaMA: transformers' LLaMA decoder with no rotary embedding and ALiBi-biased attention.

Everything except attention is transformers' own LLaMA (RMSNorm, SwiGLU MLP, GQA, KV cache, generate),
and the state dict is exactly LLaMA's: ALiBi has no parameters. The rotary module is replaced by one
that produces nothing, so no layer can rotate anything by accident.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LlamaForCausalLM
from transformers.cache_utils import Cache
from transformers.models.llama.modeling_llama import LlamaAttention

from coca_eval.models.alibi.attention import BLOCK_ROWS, alibi_attention
from coca_eval.models.alibi.configuration_alibi import AlibiLlamaConfig
from coca_eval.models.layer_cache import layer_cache


class AlibiLlamaAttention(LlamaAttention):
    """LLaMA attention without rotation whose logits get -m_h·(i - j), computed in blocks of query rows.

    Subclassing keeps LLaMA's projections, scaling and head bookkeeping, and keeps transformers'
    ``output_attentions`` recorder (it looks for ``LlamaAttention`` instances) working.
    ``block_rows`` bounds the query rows per kernel call (memory O(N · block_rows)).
    """

    def __init__(self, config: AlibiLlamaConfig, layer_idx: int) -> None:
        super().__init__(config, layer_idx)
        self.block_rows = BLOCK_ROWS

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        cache: Cache | None = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        cache = layer_cache(cache, past_key_values)
        input_shape = hidden_states.shape[:-1]  # (b, n)
        hidden_shape = (*input_shape, -1, self.head_dim)  # (b, n, h | kv, d)

        q = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, h, n, d)
        k = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)

        cached = 0
        if cache is not None:  # the new rows sit after what the cache already holds
            cached = cache.get_seq_length(self.layer_idx)
            k, v = cache.update(k, v, self.layer_idx)  # (b, kv, n_past + n, d) each

        out, weights = alibi_attention(
            self,
            q,
            k,
            v,
            attention_mask,
            first_row=cached,
            scaling=self.scaling,
            dropout=0.0 if not self.training else self.attention_dropout,
            **kwargs,
        )  # (b, n, h, d), (b, h, n, n_past + n) or None
        out = self.o_proj(out.reshape(*input_shape, -1).contiguous())  # (b, n, hidden)
        return out, weights


class NoRotaryTable(torch.nn.Module):
    """Stands where LLaMA's rotary module was; the layers receive ``position_embeddings=None``."""

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> None:
        return None


class AlibiLlamaForCausalLM(LlamaForCausalLM):
    """``LlamaForCausalLM`` with ALiBi attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = AlibiLlamaConfig
    _supports_attention_backend = False  # attention is computed here, not through a swappable kernel

    def __init__(self, config: AlibiLlamaConfig) -> None:
        super().__init__(config)
        for layer in self.model.layers:
            layer.self_attn = AlibiLlamaAttention(config, layer.self_attn.layer_idx)
        self.model.rotary_emb = NoRotaryTable()
        self.post_init()  # initialises only the modules just swapped in
