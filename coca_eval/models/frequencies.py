"""p-RoPE's frequency cut ("Round and Round We Go! What makes Rotary Positional Encodings useful?",
§6.1 and App. C), shared by every decoder that offers ``rope_fraction``.

CoCA (LLaMA and GPT-NeoX) and plain p-RoPE LLaMA all cut the same way, after transformers' own rotary
table is built, so the cut composes with every rope type and with the evaluation-time rope patches.
"""

from __future__ import annotations

import torch
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding


def keep_highest_frequencies(
    cos: torch.Tensor, sin: torch.Tensor, fraction: float, scaling: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """p-RoPE ("Round and Round We Go!", App. C): the lowest ``1 - fraction`` frequencies get angle 0,
    i.e. no rotation.

    Done on the final cos/sin rather than on ``inv_freq`` so that every rope type (dynamic NTK rewrites
    ``inv_freq`` per call) composes with it. An angle-0 pair has cos = 1 and sin = 0, times the rope's
    own attention scaling (YaRN), which is what a zero inverse frequency would have produced.
    """
    half = cos.shape[-1] // 2
    kept = int(fraction * cos.shape[-1] // 2)  # the paper's int(p * head_dim // 2)
    if kept >= half:
        return cos, sin
    frozen = torch.arange(half, device=cos.device) >= kept  # (rot/2,)
    frozen = torch.cat((frozen, frozen))  # (rot,) in the cat(freqs, freqs) layout
    return cos.masked_fill(frozen, scaling), sin.masked_fill(frozen, 0.0)


class RopeFractionMixin:
    """The config side: a ``rope_fraction`` outside [0, 1] fails when the config is built, not mid-forward."""

    rope_fraction: float

    def validate_rope_fraction(self) -> None:
        if not 0.0 <= float(self.rope_fraction) <= 1.0:
            raise ValueError(f"rope_fraction must lie in [0, 1], got {self.rope_fraction!r}")


class HighestFrequenciesMixin:
    """Put before a transformers rotary-embedding class: its table, then the cut of ``config.rope_fraction``.

    A mixin rather than a wrapper keeps the subclass a rotary embedding in every sense transformers
    checks (``rope_type``, ``original_inv_freq`` for dynamic NTK, the ``dynamic_rope_update`` hook).
    """

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = super().forward(x, position_ids)  # (b, n, rot) each
        return keep_highest_frequencies(cos, sin, self.config.rope_fraction, self.attention_scaling)


class HighestFrequenciesLlamaRotaryEmbedding(HighestFrequenciesMixin, LlamaRotaryEmbedding):
    """LLaMA's rotary table (any rope type) with p-RoPE's frequency cut applied once per forward."""
