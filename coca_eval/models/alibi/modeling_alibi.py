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

from coca_eval.models.alibi.attention import BLOCK_ROWS, alibi_attention
from coca_eval.models.alibi.configuration_alibi import AlibiLlamaConfig
from coca_eval.models.swapped import SwappedAttentionModel, SwappedLlamaAttention


class AlibiLlamaAttention(SwappedLlamaAttention):
    """LLaMA attention without rotation whose logits get -m_h·(i - j), computed in blocks of query rows.

    The projections, the cache keyword and the output projection are LLaMA's
    (:class:`~coca_eval.models.swapped.SwappedLlamaAttention`).
    ``block_rows`` bounds the query rows per kernel call (memory O(N · block_rows)).
    """

    def __init__(self, config: AlibiLlamaConfig, layer_idx: int) -> None:
        super().__init__(config, layer_idx)
        self.block_rows = BLOCK_ROWS

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        position_embeddings: None,
        attention_mask: torch.Tensor | None,
        cache: Cache | None,
        kwargs: dict,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """ALiBi of q (b, h, n, d) over k, v (b, kv, n, d); no position embeddings reach it."""
        cached = 0
        if cache is not None:  # the new rows sit after what the cache already holds
            cached = cache.get_seq_length(self.layer_idx)
            k, v = cache.update(k, v, self.layer_idx)  # (b, kv, n_past + n, d) each

        return alibi_attention(
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


class NoRotaryTable(torch.nn.Module):
    """Stands where LLaMA's rotary module was; the layers receive ``position_embeddings=None``."""

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> None:
        return None


class AlibiLlamaForCausalLM(SwappedAttentionModel, LlamaForCausalLM):
    """``LlamaForCausalLM`` with ALiBi attention in every layer; loads with ``AutoModelForCausalLM``."""

    config_class = AlibiLlamaConfig
    attention_class = AlibiLlamaAttention
    _supports_attention_backend = False  # attention is computed here, not through a swappable kernel

    def rotary_table(self, config: Any) -> torch.nn.Module:
        return NoRotaryTable()
