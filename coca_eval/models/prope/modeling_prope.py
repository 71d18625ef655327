"""p-RoPE LLaMA: transformers' LLaMA decoder whose rotary table leaves the lowest frequencies unrotated.

Attention, cache, MLP and weights are LLaMA's own; only the rotary module differs, and it is the one
CoCA uses for its ``rope_fraction`` (:mod:`coca_eval.models.frequencies`), so there is a single p-RoPE
implementation. Since the layers stay plain ``LlamaDecoderLayer`` / ``LlamaAttention``, the hf backend's
fast paths (last layer on scored rows only) apply to it as to LLaMA.
"""

from __future__ import annotations

from transformers import LlamaForCausalLM

from coca_eval.models.frequencies import HighestFrequenciesLlamaRotaryEmbedding
from coca_eval.models.prope.configuration_prope import PRopeLlamaConfig


class PRopeLlamaForCausalLM(LlamaForCausalLM):
    """``LlamaForCausalLM`` with p-RoPE's frequency cut; loads with ``AutoModelForCausalLM``."""

    config_class = PRopeLlamaConfig

    def __init__(self, config: PRopeLlamaConfig) -> None:
        super().__init__(config)
        self.model.rotary_emb = HighestFrequenciesLlamaRotaryEmbedding(config)
        self.post_init()  # the rotary module has buffers only; nothing new to initialise
