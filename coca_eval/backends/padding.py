"""Prompts of unequal lengths decoded in one batch on the hf backend: left padding, an attention mask and
position ids, so each row sees exactly its own tokens.

Published conversations (MRCR's, LongBench's) all differ in length, so the one-length batches of
:mod:`~coca_eval.backends.hf_generation` would decode each alone, reading the weights once per token of
every row. Here the rows of a batch are padded on the left to its longest prompt: the pad positions are
masked out of every row's attention (as keys; as queries their output is never read), and position ids
count each row's own tokens from 0, so a row's prompt and answer get the positions a batch of one
gives them. The last position of every row is its own last token, so the prefill's logits and every
decoding step are the row's own.

Rows are planned by :func:`padded_batches`: longest first, and a row joins a batch only while the
batch's padded share of prompt positions stays within :data:`PAD_SHARE`, so padding never costs more
than a quarter of a batch's prefill. A batch whose rows all have one length is not padded at all: it
takes the one-length path unchanged (no mask, no position ids).

Where padding cannot be exact, prompts keep the one-length path (:func:`padding_is_exact`):

* dynamic rope (dynamic NTK, dynamic YaRN) and LongRoPE rescale from the largest position a forward
  sees, so a short row padded beside a long one would be rotated at the long row's scaling;
* sliding-window attention keeps its own caches, which cannot be stacked (rows prefilled apart) and
  are left as they are;
* a model on which a short padded probe does not give batch one's logits (a plug-in's attention that
  ignores the mask or the position ids).

Pad positions hold the row's own first token, so padding brings no token the row lacks (a non-finite
embedding stays the row's own failure). What padding leaves: once the longest rows of a batch stop,
the others still attend over the pad columns they kept (masked, so wasted work but no change); the
share cap bounds it at the start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

PAD_SHARE = 0.25
"""The most of a padded batch's prompt positions that may be padding."""

LENGTH_RESCALING = ("dynamic", "longrope")
"""Rope types whose table depends on the largest position of a forward."""


def padded_batches(lengths: Sequence[int], size: int, share: float = PAD_SHARE) -> list[list[int]]:
    """The prompts' indices cut into batches of at most ``size``, longest prompt first; a prompt joins
    the current batch only while that batch's padding stays within ``share`` of its positions."""
    batches: list[list[int]] = []
    filled = 0
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        if batches and len(batches[-1]) < size:
            width, rows = lengths[batches[-1][0]], len(batches[-1]) + 1
            if filled + lengths[i] >= (1 - share) * width * rows:
                batches[-1].append(i)
                filled += lengths[i]
                continue
        batches.append([i])
        filled = lengths[i]
    return batches


@dataclass
class PaddedRows:
    """The attention mask (b, n) and each row's next position (b,) of a left-padded batch."""

    mask: torch.Tensor
    next_position: torch.Tensor

    @classmethod
    def left_padded(
        cls, prompts: Sequence[Sequence[int]], width: int, device
    ) -> tuple[list[list[int]], PaddedRows]:
        """The rows padded on the left to ``width`` with their own first token, and their padding."""
        rows = [[prompt[0]] * (width - len(prompt)) + list(prompt) for prompt in prompts]
        lengths = torch.tensor([len(prompt) for prompt in prompts], device=device)  # (b,)
        columns = torch.arange(width, device=device)  # (n,)
        mask = (columns[None, :] >= (width - lengths)[:, None]).long()  # (b, n)
        return rows, cls(mask, lengths)

    def prompt_inputs(self) -> dict:
        """The prefill's mask and position ids: each row counts its own tokens from 0 (pads at 0)."""
        positions = (self.mask.cumsum(dim=-1) - 1).clamp(min=0)  # (b, n)
        return {"attention_mask": self.mask, "position_ids": positions}

    def step(self) -> dict:
        """The mask and position ids of one more token per row (the next decoding step's inputs)."""
        self.mask = torch.cat([self.mask, self.mask.new_ones((self.mask.shape[0], 1))], dim=1)  # (b, n + 1)
        positions = self.next_position[:, None]  # (b, 1)
        self.next_position = self.next_position + 1  # (b,)
        return {"attention_mask": self.mask, "position_ids": positions}

    def keep(self, going: list[int]) -> None:
        """Only the rows ``going``, in that order (finished rows leave the batch)."""
        index = torch.tensor(going, device=self.mask.device)  # (r,)
        self.mask = self.mask.index_select(0, index)  # (r, n)
        self.next_position = self.next_position.index_select(0, index)  # (r,)

    @classmethod
    def joined(cls, parts: Sequence[PaddedRows]) -> PaddedRows:
        """Parts of one width prefilled apart, as one batch in order."""
        mask = torch.cat([p.mask for p in parts])  # (b, n)
        return cls(mask, torch.cat([p.next_position for p in parts]))  # (b,)


def _rescales_with_length(model) -> bool:
    for module in model.modules():
        rope_type = getattr(module, "rope_type", None)
        types = rope_type.values() if isinstance(rope_type, dict) else [rope_type]
        if any(isinstance(t, str) and any(k in t for k in LENGTH_RESCALING) for t in types):
            return True
    return False


def slides(config) -> bool:
    """Whether some attention layer of the (text) config uses a sliding window."""
    if getattr(config, "sliding_window", None) and "sliding_attention" in (
        getattr(config, "layer_types", None) or []
    ):
        return True
    return bool(getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True))


def _probe_rows(vocab: int) -> list[list[int]]:
    return [[(7 * k + 3) % vocab for k in range(n)] for n in (12, 7)]


@torch.inference_mode()
def padding_matches_batch_one(backend) -> bool:
    """Whether ``backend``'s model pads exactly: no length-dependent rope, no sliding window, and a
    padded probe of two prompts gives each one's last logits as a batch of one does (to the load
    probes' tolerance, :data:`~coca_eval.backends.probes.PROBE_TOLERANCE`)."""
    from coca_eval.backends.probes import PROBE_TOLERANCE

    model = backend.model
    if backend.has_dynamic_rope or _rescales_with_length(model) or slides(model.config.get_text_config()):
        return False
    prompts = _probe_rows(model.config.get_text_config().vocab_size)
    rows, padding = PaddedRows.left_padded(prompts, len(prompts[0]), backend.device)
    ids = torch.tensor(rows, device=backend.device)  # (2, n)
    padded = model(input_ids=ids, use_cache=False, **padding.prompt_inputs()).logits[:, -1].float()  # (2, v)
    tolerance = PROBE_TOLERANCE.get(model.dtype, max(PROBE_TOLERANCE.values()))
    for row, prompt in enumerate(prompts):
        alone = model(input_ids=torch.tensor([prompt], device=backend.device), use_cache=False)  # (1, m, v)
        last = alone.logits[0, -1].float()  # (v,)
        if not torch.allclose(padded[row], last, rtol=tolerance, atol=tolerance):
            return False
    return True
