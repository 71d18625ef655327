"""Batched scoring for the OpenCompass wrapper, on top of :meth:`HFBackend.score`.

Sequences of a batch are right-padded. A causal model's logits at a real token never see the pads
after it, so no attention mask is needed for scoring; the pads are masked out of the loss instead.
(Generation pads on the left and passes an attention mask, since new tokens follow the prompt.)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def padded_batch(
    sequences: Sequence[Sequence[int]], left: bool = False, pad: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, N] ids and the [B, N] mask of real tokens."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        span = slice(width - len(seq), width) if left else slice(0, len(seq))
        ids[row, span] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, span] = 1
    return ids, mask


def sequence_nll(
    backend, sequences: Sequence[Sequence[int]], skip: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-position NLL [B, N-1] of every token after the first, and the mask of the scored ones:
    real tokens at index >= ``skip[b]`` (the first token has no prediction and is never scored)."""
    ids, real = padded_batch(sequences)
    nll = backend.score(ids, 0, ids[:, 1:]).float()  # [B, N-1]
    position = torch.arange(1, ids.shape[1]).unsqueeze(0)  # index of each predicted token
    scored = (real[:, 1:] == 1) & (position >= torch.tensor(list(skip)).unsqueeze(1))
    return nll * scored, scored.float()


def mean_nll(backend, sequences: Sequence[Sequence[int]], skip: Sequence[int]) -> torch.Tensor:
    """OpenCompass's PPL score of each sequence: the summed NLL of its scored tokens divided by
    ``len(sequence) - skip``, as its own HuggingFace wrapper divides. Without a mask (``skip`` 0) that
    counts the first token, which nothing predicts, so the divisor is one more than the scored tokens;
    keeping the quirk keeps choice rankings, and so accuracies, equal to OpenCompass's own."""
    nll, _ = sequence_nll(backend, sequences, skip)
    lengths = torch.tensor([len(seq) - first for seq, first in zip(sequences, skip, strict=True)])
    return nll.sum(dim=1).double() / lengths.clamp(min=1)  # [B]


def continuation_nll(backend, pairs: Sequence[tuple[Sequence[int], int]]) -> torch.Tensor:
    """Summed NLL of the last ``k`` tokens of each sequence, for (sequence, k) pairs."""
    sequences = [seq for seq, _ in pairs]
    skip = [len(seq) - k for seq, k in pairs]
    nll, _ = sequence_nll(backend, sequences, skip)
    return nll.sum(dim=1).double()
