"""Configuration of the ALiBi LLaMA decoder (Press, Smith & Lewis, "Train Short, Test Long: Attention with
Linear Biases Enables Input Length Extrapolation", ICLR 2022).

LLaMA's blocks (RMSNorm, SwiGLU, GQA) with no position embedding at all: each head adds the bias
-m_h·(i - j) to its attention logits. The slopes m_h follow from the head count alone, so the config
needs no new field. The inherited ``rope_parameters`` table is unused; ``alibi = True`` is what the
harness reads to know that (no hard position limit, and ``--rope`` patches are refused), as it reads
Falcon's ``alibi`` flag.
"""

from __future__ import annotations

from huggingface_hub.dataclasses import strict
from transformers import LlamaConfig


@strict
class AlibiLlamaConfig(LlamaConfig):
    """LLaMA config whose attention is biased by ALiBi instead of rotated by RoPE."""

    model_type = "alibi_llama"
    alibi = True  # a class constant, not a field: every config of this type is ALiBi
