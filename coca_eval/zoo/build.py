"""A zoo spec as a transformers config and a freshly initialised model.

Each position scheme maps to a registered model type, so the trained checkpoint loads anywhere with
``AutoModelForCausalLM``: ``llama`` (RoPE), ``coca_llama`` (CoCA slack/strict), ``alibi_llama`` and
``prope_llama`` (p-RoPE; p = 0 is NoPE). Nothing but the attention's position handling differs.
"""

from __future__ import annotations

from typing import Any

from coca_eval.zoo.recipe import ZooSpec

MODEL_TYPES = {"rope": "llama", "coca": "coca_llama", "alibi": "alibi_llama", "prope": "prope_llama"}


def config_kwargs(spec: ZooSpec, eos_id: int, pad_id: int) -> dict[str, Any]:
    """The shared architecture plus the position scheme's own fields."""
    arch = spec.architecture
    kwargs: dict[str, Any] = {
        "vocab_size": arch.vocab_size,
        "hidden_size": arch.hidden_size,
        "intermediate_size": arch.intermediate_size,
        "num_hidden_layers": arch.num_hidden_layers,
        "num_attention_heads": arch.num_attention_heads,
        "num_key_value_heads": arch.num_attention_heads,
        "max_position_embeddings": spec.recipe.context,
        "tie_word_embeddings": True,
        "bos_token_id": None,
        "eos_token_id": eos_id,
        "pad_token_id": pad_id,
    }
    if spec.position != "alibi":
        kwargs["rope_parameters"] = {"rope_type": "default", "rope_theta": arch.rope_theta}
    if spec.position == "coca":
        kwargs["coca_variant"] = spec.coca_variant
    if spec.position == "prope":
        kwargs["rope_fraction"] = spec.rope_fraction
    return kwargs


def build_model(spec: ZooSpec, eos_id: int, pad_id: int):
    """A float32 model with weights drawn from the current torch seed."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types

    register_model_types()
    config = AutoConfig.for_model(MODEL_TYPES[spec.position], **config_kwargs(spec, eos_id, pad_id))
    config.architectures = None
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32)
