"""Which prompts take the shared-prefix route, by an estimate of each route's prefill FLOPs.

Reusing a cached prefix saves prefilling it once per row, but the rest of a row then starts past
the cached keys: its queries attend through an explicit causal mask, and SDPA computes every query of
a forward against every key up to the forward's last one, where a whole prompt's causal kernel skips
the upper triangle. A short prefix saves less than that costs: RULER's variable tracking at 8k (a
prefix of a few dozen tokens) prefilled 1.7x slower through the route than as whole rows. The rest is
therefore prefilled :data:`REST_CHUNK` tokens at a time (each forward's rectangle then holds little
more than its share of the triangle), and a row takes the route only where the estimate says it saves.

The estimate counts the linear layers' FLOPs per token (two per weight outside the embeddings) and the
attention's per (query, key) pair (four per head dimension, head and layer), a masked pair costing
:data:`MASKED_PAIR_COST` causal ones. Checked against the clock (``benchmarks/prefix_route_bench.py``,
``reports/benchmarks/prefix_route.md``): SmolLM2-135M's shape on the CPU at 1k, 4k and 8k, prefix
shares from 10 to 90 %, the estimate picks the faster route in 13 of 15 cases (the other two within
1 % of parity, where either route costs the same), and one rate turns it into seconds within 5 % at
the median.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

REST_CHUNK = 1024
"""Tokens of a row's rest prefilled per forward on top of the cached prefix."""

MASKED_PAIR_COST = 1.2
"""A (query, key) pair under an explicit mask, in pairs of the causal kernel (CPU SDPA: 1.14-1.15)."""


GROUPED_HEADS_SWITCH = "TRANSFORMERS_SDPA_FORCE_GQA"
"""transformers' switch that hands SDPA grouped key/value heads (``enable_gqa``) under a mask too."""


@contextmanager
def grouped_kv_heads(device) -> Iterator[None]:
    """On CPU, attention under an explicit mask (a rest past its cached prefix, left-padded rows) reads
    each key/value head once for its group of query heads, as the unmasked causal kernel does.

    Under a mask transformers first copies every key/value head to each of its query heads, because
    CUDA's fused kernels take no mask with grouped heads; CPU's take both, and give the very same
    numbers (the same products and sums per query head). The copy is most of the masked attention's
    cost at a few thousand keys. A switch the caller has set either way is left as it is."""
    if getattr(device, "type", str(device).split(":")[0]) != "cpu" or GROUPED_HEADS_SWITCH in os.environ:
        yield
        return
    os.environ[GROUPED_HEADS_SWITCH] = "1"
    try:
        yield
    finally:
        os.environ.pop(GROUPED_HEADS_SWITCH, None)


@dataclass(frozen=True)
class PrefillCost:
    """Prefill FLOPs of one model: ``per_token`` in its linear layers, ``per_pair`` in attention."""

    per_token: float
    per_pair: float

    @classmethod
    def of(cls, model) -> PrefillCost | None:
        """Read off the model: its weights outside the embeddings (the head runs on one position per
        prompt) and its attention's layers, heads and head dimension; None for a configuration that
        does not name its layers and heads (a plug-in's own), whose rows then all reuse their prefix."""
        config = model.config.get_text_config()
        heads = getattr(config, "num_attention_heads", None)
        layers = getattr(config, "num_hidden_layers", None)
        if not heads or not layers:
            return None
        embeddings = {id(model.get_input_embeddings().weight)}
        head = model.get_output_embeddings()
        if head is not None:
            embeddings.add(id(head.weight))
        weights = sum(p.numel() for p in model.parameters() if id(p) not in embeddings)
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        return cls(2.0 * weights, 4.0 * layers * heads * head_dim)

    def whole(self, length: int) -> float:
        """A prompt prefilled from empty: the causal kernel computes the lower triangle."""
        return self.per_token * length + self.per_pair * length * (length + 1) / 2

    def rest(self, length: int, cached: int) -> float:
        """The tokens past ``cached`` prefilled :data:`REST_CHUNK` at a time on top of the cache, each
        forward's queries masked against every key up to its last."""
        pairs, start = 0, cached
        while start < length:
            size = min(REST_CHUNK, length - start)
            pairs += size * (start + size)
            start += size
        return self.per_token * (length - cached) + MASKED_PAIR_COST * self.per_pair * pairs


def rows_reusing(
    cost: PrefillCost,
    lengths: Sequence[int],
    prefix_lengths: Sequence[int],
    groups: Sequence[int],
) -> list[bool]:
    """Whether each prompt takes the shared-prefix route: a row goes where its rest costs less than
    its whole prompt, and a group's rows go only where what they save pays for prefilling the group's
    longest prefix among them once."""
    saving = [cost.whole(n) - cost.rest(n, max(1, p)) for n, p in zip(lengths, prefix_lengths, strict=True)]
    reusing = [False] * len(lengths)
    for group in set(groups):
        rows = [i for i, g in enumerate(groups) if g == group and saving[i] > 0]
        deepest = max((max(1, prefix_lengths[i]) for i in rows), default=0)
        if len(rows) > 1 and sum(saving[i] for i in rows) > cost.whole(deepest):
            for i in rows:
                reusing[i] = True
    return reusing
