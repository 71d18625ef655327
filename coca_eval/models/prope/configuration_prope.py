"""Configuration of the p-RoPE LLaMA decoder ("Round and Round We Go! What makes Rotary Positional
Encodings useful?", §6.1).

``rope_fraction`` is p-RoPE's p: only the fraction p of the HIGHEST rotary frequencies rotate, the lowest
1 - p pass through unrotated. p = 1 is RoPE (exactly ``LlamaForCausalLM``), p = 0 is NoPE (no position
signal at all, only the causal mask). The paper's best setting, p = 0.75, is the default.

A plain subclass, so everything else (rope types, GQA, the evaluation-time rope patches) keeps its
transformers meaning and a saved ``config.json`` differs from LLaMA's by ``model_type`` and this field.
"""

from __future__ import annotations

from huggingface_hub.dataclasses import strict
from transformers import LlamaConfig

from coca_eval.models.frequencies import RopeFractionMixin


@strict
class PRopeLlamaConfig(RopeFractionMixin, LlamaConfig):
    """LLaMA config whose plain attention rotates only the highest ``rope_fraction`` of frequencies."""

    model_type = "prope_llama"
    rope_fraction: float | int = 0.75
