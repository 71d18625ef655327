"""NeoX-CoCA for vLLM, written natively (vLLM 0.32 runs plain GPT-NeoX only through its Transformers
fallback, which a custom attention cannot hook into).

Module names and layouts follow the transformers GPT-NeoX checkpoint, so weights load as they are:
the fused ``query_key_value`` keeps its per-head [q | t | v] rows (a column split over tensor-parallel
ranks still hands each rank whole heads), LayerNorms, GELU MLP, parallel residual, partial rotary.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn
from vllm.distributed import get_tensor_model_parallel_world_size
from vllm.model_executor.layers.activation import get_act_fn
from vllm.model_executor.layers.attention import Attention
from vllm.model_executor.layers.linear import ColumnParallelLinear, RowParallelLinear
from vllm.model_executor.layers.logits_processor import LogitsProcessor
from vllm.model_executor.layers.rotary_embedding import get_rope
from vllm.model_executor.layers.vocab_parallel_embedding import ParallelLMHead, VocabParallelEmbedding
from vllm.model_executor.model_loader.weight_utils import default_weight_loader

from coca_eval.models.vllm_plugin.ops import coca_query_key, fold_pair_means_, with_rope_fraction


class CocaNeoXAttention(nn.Module):
    def __init__(self, config, cache_config, quant_config, prefix: str) -> None:
        super().__init__()
        self.head_size = config.hidden_size // config.num_attention_heads
        self.num_heads = config.num_attention_heads // get_tensor_model_parallel_world_size()
        self.strict = config.coca_variant == "strict"
        bias = getattr(config, "attention_bias", True)
        self.query_key_value = ColumnParallelLinear(
            config.hidden_size, 3 * config.hidden_size, bias=bias, quant_config=quant_config,
            prefix=f"{prefix}.query_key_value",
        )  # fmt: skip
        self.dense = RowParallelLinear(
            config.hidden_size, config.hidden_size, bias=bias, quant_config=quant_config,
            prefix=f"{prefix}.dense",
        )  # fmt: skip
        rotary = get_rope(
            self.head_size,
            max_position=config.max_position_embeddings,
            rope_parameters=config.rope_parameters,
            is_neox_style=True,
        )
        self.rotary_emb = with_rope_fraction(rotary, float(getattr(config, "rope_fraction", 1.0)))
        self.attn = Attention(
            self.num_heads,
            self.head_size,
            self.head_size**-0.5,
            cache_config=cache_config,
            quant_config=quant_config,
            prefix=f"{prefix}.attn",
        )

    def fold_loaded_weights(self) -> None:
        """Fold the coefficient (and, strict, query) pair means into the per-head [q | t | v] rows."""
        d = self.head_size
        for param in (self.query_key_value.weight, self.query_key_value.bias):
            if param is None:
                continue
            per_head = param.data.view(self.num_heads, 3 * d, *param.shape[1:])  # (h, 3d, ...)
            fold_pair_means_(per_head[:, d : 2 * d], d, axis=1)  # t rows of every head
            if self.strict:
                fold_pair_means_(per_head[:, :d], d, axis=1)  # q rows of every head

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        qtv, _ = self.query_key_value(hidden_states)  # (T, h*3d), per head [q | t | v]
        qtv = qtv.view(qtv.shape[0], self.num_heads, 3 * self.head_size)  # (T, h, 3d)
        q, t, v = (part.reshape(qtv.shape[0], -1) for part in qtv.chunk(3, dim=-1))  # (T, h*d) each
        query, key = coca_query_key(q, t, positions, self.rotary_emb)  # (T, h*d) each
        out = self.attn(query, key, v)  # (T, h*d)
        output, _ = self.dense(out)  # (T, hidden)
        return output


class CocaNeoXMLP(nn.Module):
    def __init__(self, config, quant_config, prefix: str) -> None:
        super().__init__()
        self.dense_h_to_4h = ColumnParallelLinear(
            config.hidden_size, config.intermediate_size, quant_config=quant_config,
            prefix=f"{prefix}.dense_h_to_4h",
        )  # fmt: skip
        self.dense_4h_to_h = RowParallelLinear(
            config.intermediate_size, config.hidden_size, quant_config=quant_config,
            prefix=f"{prefix}.dense_4h_to_h",
        )  # fmt: skip
        self.act = get_act_fn(config.hidden_act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, _ = self.dense_h_to_4h(x)  # (T, inter)
        x, _ = self.dense_4h_to_h(self.act(x))  # (T, hidden)
        return x


class CocaNeoXLayer(nn.Module):
    def __init__(self, config, cache_config, quant_config, prefix: str) -> None:
        super().__init__()
        self.parallel = config.use_parallel_residual
        self.input_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_attention_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.attention = CocaNeoXAttention(config, cache_config, quant_config, f"{prefix}.attention")
        self.mlp = CocaNeoXMLP(config, quant_config, f"{prefix}.mlp")

    def forward(self, positions: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        attended = self.attention(positions, self.input_layernorm(x))  # (T, hidden)
        if self.parallel:  # x + attn(ln1(x)) + mlp(ln2(x))
            return x + attended + self.mlp(self.post_attention_layernorm(x))
        x = x + attended
        return x + self.mlp(self.post_attention_layernorm(x))


class CocaNeoXModel(nn.Module):
    def __init__(self, vllm_config, prefix: str) -> None:
        super().__init__()
        config = vllm_config.model_config.hf_config
        cache, quant = vllm_config.cache_config, vllm_config.quant_config
        self.embed_in = VocabParallelEmbedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            CocaNeoXLayer(config, cache, quant, f"{prefix}.layers.{i}")
            for i in range(config.num_hidden_layers)
        )
        self.final_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids, positions, inputs_embeds=None) -> torch.Tensor:
        x = self.embed_in(input_ids) if inputs_embeds is None else inputs_embeds  # (T, hidden)
        for layer in self.layers:
            x = layer(positions, x)  # (T, hidden)
        return self.final_layer_norm(x)  # (T, hidden)


class CocaNeoXForCausalLM(nn.Module):
    """Architecture ``CocaNeoXForCausalLM`` (model type ``coca_gpt_neox``, slack or strict, p-RoPE)."""

    def __init__(self, *, vllm_config, prefix: str = "") -> None:
        super().__init__()
        config = vllm_config.model_config.hf_config
        self.config = config
        self.gpt_neox = CocaNeoXModel(vllm_config, f"{prefix}gpt_neox")
        self.lm_head = ParallelLMHead(config.vocab_size, config.hidden_size, prefix=f"{prefix}lm_head")
        if config.tie_word_embeddings:
            self.lm_head = self.lm_head.tie_weights(self.gpt_neox.embed_in)
        self.logits_processor = LogitsProcessor(config.vocab_size)

    def embed_input_ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.gpt_neox.embed_in(input_ids)

    def forward(self, input_ids, positions, intermediate_tensors=None, inputs_embeds=None) -> torch.Tensor:
        return self.gpt_neox(input_ids, positions, inputs_embeds)  # (T, hidden)

    def compute_logits(self, hidden_states: torch.Tensor) -> torch.Tensor | None:
        return self.logits_processor(self.lm_head, hidden_states)  # (T, vocab)

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> set[str]:
        """Checkpoint names map one to one (the head is ``lm_head`` in transformers 5 checkpoints and
        ``embed_out`` in older ones); rotary buffers and old attention masks are skipped. A parameter the
        checkpoint does not provide is an error, never a silently random weight."""
        params = dict(self.named_parameters())
        loaded = set()
        for name, tensor in weights:
            name = "lm_head." + name[len("embed_out.") :] if name.startswith("embed_out.") else name
            if name not in params:
                continue  # e.g. rotary_emb.inv_freq, attention.bias / masked_bias of old checkpoints
            param = params[name]
            getattr(param, "weight_loader", default_weight_loader)(param, tensor)
            loaded.add(name)
        missing = set(params) - loaded - ({"lm_head.weight"} if self.config.tie_word_embeddings else set())
        if missing:
            raise ValueError(f"CoCA NeoX checkpoint lacks {sorted(missing)[:3]}")
        with torch.no_grad():
            for layer in self.gpt_neox.layers:
                layer.attention.fold_loaded_weights()
        return loaded
