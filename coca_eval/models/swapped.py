"""What every decoder here shares with the transformers model it extends: the stock model with its
attention swapped in every layer (CoCA, ALiBi) and its rotary module replaced.

:class:`SwappedLlamaAttention` keeps LLaMA's projections, the cache under either keyword
(:mod:`coca_eval.models.layer_cache`) and the output projection, so a LLaMA variant writes only how its
scores are computed (:meth:`~SwappedLlamaAttention.attend`). :class:`SwappedAttentionModel` builds the
stock ``*ForCausalLM`` and swaps the modules, so a variant names only which ones.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers.cache_utils import Cache
from transformers.models.llama.modeling_llama import LlamaAttention

from coca_eval.models.layer_cache import layer_cache


class SwappedLlamaAttention(LlamaAttention):
    """LLaMA attention whose scores a subclass computes from q, the key projection's output and v.

    Subclassing keeps LLaMA's projections, scaling and head bookkeeping, and keeps transformers'
    ``output_attentions`` recorder (it looks for ``LlamaAttention`` instances) working. ``key_name`` is
    the projection in ``k_proj``'s place (CoCA's ``t_proj``, with the same shape).
    """

    key_name = "k_proj"

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: tuple[torch.Tensor, torch.Tensor] | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        cache: Cache | None = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        cache = layer_cache(cache, past_key_values)
        input_shape = hidden_states.shape[:-1]  # (b, n)
        hidden_shape = (*input_shape, -1, self.head_dim)  # (b, n, h | kv, d)

        q = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, h, n, d)
        k = getattr(self, self.key_name)(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (b, kv, n, d)

        out, weights = self.attend(q, k, v, position_embeddings, attention_mask, cache, kwargs)
        # out (b, n, h, d), weights (b, h, n, n_past + n) or None
        out = self.o_proj(out.reshape(*input_shape, -1).contiguous())  # (b, n, hidden)
        return out, weights

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        position_embeddings: tuple[torch.Tensor, torch.Tensor] | None,
        attention_mask: torch.Tensor | None,
        cache: Cache | None,
        kwargs: dict,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The variant's attention of q (b, h, n, d) over k, v (b, kv, n, d), the cache updated with
        whatever the variant keeps in it: (b, n, h, d) and the weights, or None."""
        raise NotImplementedError


class SwappedAttentionModel:
    """Put before a transformers ``*ForCausalLM``: the stock model is built, then every decoder layer's
    attention (``attention_name``) becomes ``attention_class`` at the same layer index and the
    backbone's (``backbone_name``) rotary module becomes :meth:`rotary_table`'s.

    ``post_init`` runs again after the swap, and initialises only the modules just swapped in.
    """

    attention_class: type[torch.nn.Module]
    backbone_name = "model"  # LLaMA's; GPT-NeoX's is "gpt_neox"
    attention_name = "self_attn"  # LLaMA's; GPT-NeoX's is "attention"

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        backbone = getattr(self, self.backbone_name)
        for layer in backbone.layers:
            index = getattr(layer, self.attention_name).layer_idx
            setattr(layer, self.attention_name, self.attention_class(config, index))
        backbone.rotary_emb = self.rotary_table(config)
        self.post_init()

    def rotary_table(self, config: Any) -> torch.nn.Module:
        """The rotary module the backbone computes its position embeddings with."""
        raise NotImplementedError
