"""p-RoPE and NoPE LLaMA decoders ("Round and Round We Go! What makes Rotary Positional
Encodings useful?", §6.1) as a transformers model type.

``register()`` teaches ``AutoConfig`` and ``AutoModelForCausalLM`` the model type ``prope_llama``
(``rope_fraction`` = p; p = 0 is NoPE), so a checkpoint loads with ``from_pretrained(dir)``.
``register_model_types()`` (:mod:`coca_eval.models.registration`) calls it before any model loads;
calling it again is harmless.
"""

from __future__ import annotations

from coca_eval.models.prope.configuration_prope import PRopeLlamaConfig
from coca_eval.models.prope.modeling_prope import PRopeLlamaForCausalLM

__all__ = ["PRopeLlamaConfig", "PRopeLlamaForCausalLM", "register"]


def register() -> None:
    """Register ``prope_llama`` with the transformers Auto classes (idempotent)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    AutoConfig.register(PRopeLlamaConfig.model_type, PRopeLlamaConfig, exist_ok=True)
    AutoModelForCausalLM.register(PRopeLlamaConfig, PRopeLlamaForCausalLM, exist_ok=True)
