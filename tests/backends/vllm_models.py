"""Tiny checkpoints for the vLLM tests: head_dim 64 (vLLM's CPU kernel has no 16), attention weights
drawn at std 0.15 so CoCA differs visibly from plain attention, the tokenizer of tests/tiny_models."""

from __future__ import annotations

from pathlib import Path

import torch
from tiny_models import make_tokenizer

SHAPE = dict(
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=2,
    max_position_embeddings=256,
    bos_token_id=0,
    eos_token_id=1,
    tie_word_embeddings=False,
)
ATTENTION = ("q_proj", "k_proj", "t_proj", "v_proj", "query_key_value")


def make_model(directory: Path, kind: str, variant: str = "slack", seed: int = 0, **overrides) -> Path:
    """``kind``: llama (plain), coca_llama or coca_neox; saved with a BOS-adding tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from coca_eval.models.coca import (
        CocaLlamaConfig,
        CocaLlamaForCausalLM,
        CocaNeoXConfig,
        CocaNeoXForCausalLM,
    )

    tokenizer = make_tokenizer(add_bos=True)
    settings = {**SHAPE, "vocab_size": len(tokenizer), **overrides}
    if kind == "llama":
        model_class, config = LlamaForCausalLM, LlamaConfig(num_key_value_heads=1, **settings)
    elif kind == "coca_llama":
        config = CocaLlamaConfig(num_key_value_heads=1, coca_variant=variant, **settings)
        model_class = CocaLlamaForCausalLM
    else:
        config = CocaNeoXConfig(**{"rotary_pct": 0.5, "coca_variant": variant, **settings})
        model_class = CocaNeoXForCausalLM
    torch.manual_seed(seed)
    model = model_class(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if any(part in name for part in ATTENTION) and name.endswith("weight"):
                param.normal_(0.0, 0.15)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return Path(directory)


def with_nan_embedding_row(source: Path, target: Path, token: int) -> Path:
    """A copy of ``source`` whose embedding row ``token`` is NaN: every position from that token's first
    appearance in a window on scores NaN (attention carries it forward), the positions before stay
    finite, as in a model whose fp16 activations overflow from some position on."""
    import shutil

    from safetensors.torch import load_file, save_file

    shutil.copytree(source, target)
    weights = load_file(target / "model.safetensors")
    weights["model.embed_tokens.weight"][token] = float("nan")
    save_file(weights, target / "model.safetensors", metadata={"format": "pt"})
    return Path(target)
