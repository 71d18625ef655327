"""ALiBi LLaMA decoder (Press et al., "Train Short, Test Long", ICLR 2022) as a transformers model type.

``register()`` teaches ``AutoConfig`` and ``AutoModelForCausalLM`` the model type ``alibi_llama``, so a
checkpoint loads with ``from_pretrained(dir)`` and ``--model DIR`` works in every hf task.
``register_model_types()`` (:mod:`coca_eval.models.registration`) calls it before any model loads;
calling it again is harmless.
"""

from __future__ import annotations

from coca_eval.models.alibi.attention import alibi_slopes
from coca_eval.models.alibi.configuration_alibi import AlibiLlamaConfig
from coca_eval.models.alibi.modeling_alibi import AlibiLlamaAttention, AlibiLlamaForCausalLM

__all__ = ["AlibiLlamaAttention", "AlibiLlamaConfig", "AlibiLlamaForCausalLM", "alibi_slopes", "register"]


def register() -> None:
    """Register ``alibi_llama`` with the transformers Auto classes (idempotent)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    AutoConfig.register(AlibiLlamaConfig.model_type, AlibiLlamaConfig, exist_ok=True)
    AutoModelForCausalLM.register(AlibiLlamaConfig, AlibiLlamaForCausalLM, exist_ok=True)
