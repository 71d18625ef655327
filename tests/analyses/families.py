"""One tiny checkpoint per decoder family the analyses support: LLaMA, Gemma 3, GPT-NeoX and both
CoCA decoders. ``build`` returns (directory, query heads, layers, rotary planes)."""

from __future__ import annotations

from pathlib import Path

import torch
from tiny_models import make_tiny_gemma3, make_tiny_llama, make_tokenizer


def _neox(directory: Path, coca: bool) -> Path:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    from coca_eval.models.coca import CocaNeoXConfig, CocaNeoXForCausalLM

    tokenizer = make_tokenizer(add_bos=False)
    settings = dict(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, rotary_pct=0.5, max_position_embeddings=256, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    torch.manual_seed(0)
    config_class, model_class = (
        (CocaNeoXConfig, CocaNeoXForCausalLM) if coca else (GPTNeoXConfig, GPTNeoXForCausalLM)
    )
    model_class(config_class(**settings)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build(family: str, directory: Path) -> tuple[Path, int, int, int]:
    from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM

    if family == "llama":
        return make_tiny_llama(directory, add_bos=False), 4, 2, 8
    if family == "coca_llama":
        model = make_tiny_llama(
            directory, add_bos=False, config_class=CocaLlamaConfig, model_class=CocaLlamaForCausalLM
        )
        return model, 4, 2, 8
    if family == "gemma3":
        return make_tiny_gemma3(directory), 4, 3, 8
    return _neox(directory, coca=family == "coca_gpt_neox"), 4, 2, 4  # rotary_pct 0.5 of head dim 16
