"""CoCA decoders (Collinear Constrained Attention, seed 000) as transformers models.

``register()`` teaches ``AutoConfig`` and ``AutoModelForCausalLM`` the model types ``coca_llama`` and
``coca_gpt_neox``, so a converted checkpoint loads like any other with ``from_pretrained(dir)``.
``import coca_eval`` calls it; calling it again is harmless.
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
