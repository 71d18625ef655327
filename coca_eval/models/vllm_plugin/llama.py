"""LLaMA-CoCA for vLLM: vLLM's LLaMA with the attention forward replaced by CoCA's dual form.

Everything else (projections, MLP, norms, paged KV cache, tensor parallelism, weight loading) is
vLLM's LLaMA. Checkpoints name the key projection ``t_proj``; it is loaded into the k shard of the
fused ``qkv_proj``, where it has the same shape; once loaded, the coefficient (and, strict, query)
pair means are folded into that weight (:func:`~coca_eval.models.vllm_plugin.ops.fold_pair_means_`).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from vllm.model_executor.models.llama import LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM

from coca_eval.models.vllm_plugin.ops import coca_query_key, fold_coca_projection_, with_rope_fraction


class CocaLlamaAttention(LlamaAttention):
    """Hands q ∘ rope(q) and rope(t) to vLLM's attention layer, which caches rope(t) like a key."""

    def __init__(self, config, *args, **kwargs) -> None:
        super().__init__(config, *args, **kwargs)
        self.strict = getattr(config, "coca_variant", "slack") == "strict"

    def _init_rotary_emb(self, config, quant_config) -> None:
        super()._init_rotary_emb(config, quant_config)
        self.rotary_emb = with_rope_fraction(self.rotary_emb, float(getattr(config, "rope_fraction", 1.0)))

    def fold_loaded_weights(self) -> None:
        """Per-rank rows of the fused projection: [q (h*d) | t (kv*d) | v (kv*d)]."""
        q_rows, t_rows = slice(0, self.q_size), slice(self.q_size, self.q_size + self.kv_size)
        proj = self.qkv_proj
        fold_coca_projection_(proj.weight, proj.bias, q_rows, t_rows, self.head_dim, self.strict)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        qtv, _ = self.qkv_proj(hidden_states)  # (T, (h + 2kv)*d)
        q, t, v = qtv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)  # (T, h*d), (T, kv*d) x2
        query, key = coca_query_key(q, t, positions, self.rotary_emb)  # (T, h*d), (T, kv*d)
        out = self.attn(query, key, v)  # (T, h*d)
        output, _ = self.o_proj(out)  # (T, hidden)
        return output


class CocaLlamaDecoderLayer(LlamaDecoderLayer):
    def __init__(self, vllm_config, prefix: str = "", config=None) -> None:
        super().__init__(vllm_config, prefix, config, attn_layer_type=CocaLlamaAttention)


class CocaLlamaForCausalLM(LlamaForCausalLM):
    """Architecture ``CocaLlamaForCausalLM`` (model type ``coca_llama``, slack or strict, p-RoPE)."""

    def __init__(self, *, vllm_config, prefix: str = "") -> None:
        super().__init__(vllm_config=vllm_config, prefix=prefix, layer_type=CocaLlamaDecoderLayer)

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> set[str]:
        renamed = ((name.replace(".t_proj.", ".k_proj."), tensor) for name, tensor in weights)
        loaded = super().load_weights(renamed)
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, CocaLlamaAttention):
                    module.fold_loaded_weights()
        return loaded
