"""Configs of the CoCA decoders: LLaMA or GPT-NeoX configs plus two CoCA fields.

``coca_variant`` picks the paper's query form: ``"slack"`` (CoCA-Slack, §3.2, what the reference models
were trained with) or ``"strict"``: the constraint of eq. 12 imposed by replacing each rope pair of the
query by the mean of its two entries (a linear projection, as if W_Q were constrained), under which the
dual form equals the collinear score of eq. 10, i.e. Σ_j t_j |q_j|² cos((m - n) θ_j) (eq. 18).
``rope_fraction`` is p-RoPE's p: only the fraction p of the highest rotary frequencies rotate (of the
rotary dims, under partial rotary), the rest pass through unrotated (p = 1 is RoPE, p = 0 is NoPE).

Both classes are plain subclasses, so everything else (rope scaling, GQA, ``rotary_pct``) keeps its
transformers meaning, and a saved ``config.json`` differs from the base one only by ``model_type`` and
these two fields.
"""

from __future__ import annotations

from huggingface_hub.dataclasses import strict
from transformers import GPTNeoXConfig, LlamaConfig

from coca_eval.models.frequencies import RopeFractionMixin

COCA_VARIANTS = ("slack", "strict")


class _CocaFieldsMixin(RopeFractionMixin):
    """The checks both configs share; a bad value fails when the config is built, not mid-forward."""

    coca_variant: str
    rope_fraction: float

    def validate_coca(self) -> None:
        """Reject values the attention cannot honour (an odd head dim has no halves to tie)."""
        if self.coca_variant not in COCA_VARIANTS:
            raise ValueError(f"coca_variant must be one of {COCA_VARIANTS}, got {self.coca_variant!r}")
        head_dim = getattr(self, "head_dim", None) or self.hidden_size // self.num_attention_heads
        if head_dim % 2:
            raise ValueError(f"CoCA needs an even head dimension, got {head_dim}")


@strict
class CocaLlamaConfig(_CocaFieldsMixin, LlamaConfig):
    """LLaMA config (RMSNorm, SwiGLU, GQA, rotate-half RoPE) whose attention is CoCA."""

    model_type = "coca_llama"
    base_model_tp_plan = {k.replace("k_proj", "t_proj"): v for k, v in LlamaConfig.base_model_tp_plan.items()}
    coca_variant: str = "slack"
    rope_fraction: float | int = 1.0


@strict
class CocaNeoXConfig(_CocaFieldsMixin, GPTNeoXConfig):
    """GPT-NeoX config (parallel residual, fused qkv, partial rotary) whose attention is CoCA."""

    model_type = "coca_gpt_neox"
    coca_variant: str = "slack"
    rope_fraction: float | int = 1.0
