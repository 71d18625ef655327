"""Rope patches as vLLM config overrides (``hf_overrides``), per sequence length where that matters.

vLLM builds its rotary tables from the same ``rope_parameters`` transformers uses, so PI, fixed NTK,
YaRN and base overrides carry over unchanged. Dynamic NTK does not: vLLM's ``dynamic`` rope is
static (one base, chosen for ``factor x`` the trained length), while transformers picks the base from
the length of the sequence in hand. The vllm backend therefore asks for the override of each length and
re-creates its engine when it changes, with the NTK base transformers would use for that length.
Tokens generated past a prompt keep the prompt length's base (transformers moves the base on with
every new token), which :data:`DYNAMIC_NOTE` records in the run metadata.
"""

from __future__ import annotations

import copy
from typing import Any

from coca_eval.models.rope import RopePatch, apply_rope_patch

DYNAMIC_NOTE = (
    "dynamic NTK: vLLM's dynamic rope is static, so the engine is re-created per sequence length with the "
    "NTK base transformers uses at that length (exact for ppl windows and passkey prompts); tokens generated "
    "after the prompt keep the prompt's base, while transformers rescales per generated token (so passkey "
    "asks for --dynamic-rope hold, which reads the hf backend the same way)"
)


def _head_dim(config: Any) -> int:
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def dynamic_ntk_theta(config: Any, table: dict, factor: float, length: int) -> float:
    """The base transformers' dynamic NTK uses for a sequence of ``length`` tokens, computed in float32
    as transformers computes it (so the rotary tables agree to the last bit)."""
    import torch

    trained = config.max_position_embeddings
    dim = int(_head_dim(config) * table.get("partial_rotary_factor", 1.0))
    seq = torch.maximum(torch.tensor(length), torch.tensor(trained))
    base = table["rope_theta"] * ((factor * seq / trained) - (factor - 1)) ** (dim / (dim - 2))
    return float(base)


def _dynamic_table(config: Any, table: dict, factor: float, length: int) -> dict:
    kept = {k: v for k, v in table.items() if k in ("rope_theta", "partial_rotary_factor")}
    if length <= config.max_position_embeddings:
        return {**kept, "rope_type": "default"}
    return {**kept, "rope_type": "default", "rope_theta": dynamic_ntk_theta(config, table, factor, length)}


def rope_overrides(config: Any, patch: RopePatch, length: int) -> dict[str, Any]:
    """``hf_overrides`` entries that put ``patch`` on ``config`` for sequences of ``length`` tokens."""
    if patch.kind == "none":
        return {}
    if patch.kind != "dynamic":
        return {"rope_parameters": apply_rope_patch(copy.deepcopy(config), patch).rope_parameters}
    params = config.rope_parameters
    if "rope_theta" in params:
        return {"rope_parameters": _dynamic_table(config, params, patch.value, length)}
    table = _dynamic_table(config, params["full_attention"], patch.value, length)
    return {"rope_parameters": {**params, "full_attention": table}}


def rope_note(patch: RopePatch) -> str | None:
    return DYNAMIC_NOTE if patch.kind == "dynamic" else None
