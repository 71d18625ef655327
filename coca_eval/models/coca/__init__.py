"""CoCA decoders as transformers models (Collinear Constrained Attention, from "CoCA: Fusing Position
Embedding with Collinear Constrained Attention in Transformers for Long Context Window Extending").

``register()`` teaches ``AutoConfig`` and ``AutoModelForCausalLM`` the model types ``coca_llama`` and
``coca_gpt_neox``, so a converted checkpoint loads like any other with ``from_pretrained(dir)``.
:func:`coca_eval.models.registration.register_model_types` calls it before any model loads; calling it
again is harmless.
"""

from __future__ import annotations

from coca_eval.models.coca.configuration_coca import CocaLlamaConfig, CocaNeoXConfig
from coca_eval.models.coca.modeling_coca import CocaLlamaAttention, CocaLlamaForCausalLM
from coca_eval.models.coca.modeling_coca_neox import CocaNeoXAttention, CocaNeoXForCausalLM

__all__ = [
    "CocaLlamaAttention",
    "CocaLlamaConfig",
    "CocaLlamaForCausalLM",
    "CocaNeoXAttention",
    "CocaNeoXConfig",
    "CocaNeoXForCausalLM",
    "register",
]

_PAIRS = ((CocaLlamaConfig, CocaLlamaForCausalLM), (CocaNeoXConfig, CocaNeoXForCausalLM))


def register() -> None:
    """Register both CoCA model types with the transformers Auto classes (idempotent)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    for config_class, model_class in _PAIRS:
        AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
        AutoModelForCausalLM.register(config_class, model_class, exist_ok=True)
