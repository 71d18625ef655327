"""Special tokens as every backend reads them (hf, vllm, openai and the tokenizer-only sample dump):
whether a tokenizer adds BOS, text encoded without special tokens, and the EOS ids that end decoding.

They live apart from the hf backend so that backends which never load transformers models (an engine,
a server) do not import the hf backend, and torch with it, to encode a prompt.
"""

from __future__ import annotations

from typing import Any


def tokenizer_adds_bos(tokenizer: Any) -> bool:
    """Whether ``tokenizer(text)`` puts BOS in front by default (LLaMA, Gemma: yes; SmolLM2, NeoX: no)."""
    ids = tokenizer("a").input_ids
    return tokenizer.bos_token_id is not None and len(ids) > 0 and ids[0] == tokenizer.bos_token_id


def encode_plain(tokenizer: Any, text: str) -> list[int]:
    """Token ids of ``text`` without special tokens."""
    return tokenizer(text, add_special_tokens=False).input_ids


def eos_ids(generation_config, tokenizer) -> set[int]:
    """EOS ids from the model's generation config and its tokenizer."""
    eos = getattr(generation_config, "eos_token_id", None) if generation_config else None
    found = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.eos_token_id is not None:
        found.add(tokenizer.eos_token_id)
    return found
