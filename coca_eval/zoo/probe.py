"""How much a model uses its context: the checks that decide whether a zoo recipe can show extrapolation.

A position scheme can only break (or keep) what a model gets from its context. Two numbers say how
much that is, and both are cheap enough to run on a checkpoint every few hundred steps:

- **copying**: the loss on a passage read a second time, right after itself, against the first
  reading. A model with induction heads predicts the repeat almost perfectly; one without scores both
  the same. Passkey retrieval needs exactly this skill.
- **context gain**: perplexity with no context (each token read alone) and with one previous token,
  against the full window. When the window adds little over one token, misdirected attention past
  the trained length can cost at most that little, so a large perplexity rise cannot appear.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class ContextUse:
    passage: int
    first_loss: float  # mean next-token loss over the first reading of each passage
    repeat_loss: float  # ... over the second reading
    ppl_alone: float  # each token read with no context
    ppl_one_back: float  # with one previous token
    ppl_window: float  # with the full window


def _token_losses(model, ids: torch.Tensor) -> torch.Tensor:
    """Next-token losses of ``ids`` (b, n): (b, n - 1)."""
    logits = model(input_ids=ids, use_cache=False).logits  # (b, n, vocab)
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten(), reduction="none").view(
        ids.shape[0], -1
    )


@torch.no_grad()
def copy_losses(model, ids: list[int], passage: int, count: int = 8) -> tuple[float, float]:
    """Mean loss on the first and the second reading of ``count`` passages of ``ids`` read twice."""
    step = max(passage, (len(ids) - passage) // count)
    starts = list(range(0, len(ids) - passage, step))[:count]
    rows = torch.tensor([ids[s : s + passage] * 2 for s in starts])  # (count, 2 * passage)
    losses = _token_losses(model, rows)  # (count, 2 * passage - 1)
    return losses[:, : passage - 1].mean().item(), losses[:, passage:].mean().item()


@torch.no_grad()
def context_perplexities(model, ids: list[int], window: int) -> tuple[float, float, float]:
    """Perplexity of the same targets read alone, after one token, and after up to ``window`` tokens."""
    tokens = torch.tensor(ids[: window + 1])  # (w + 1,)
    alone = F.cross_entropy(model(input_ids=tokens[1:-1, None]).logits[:, 0], tokens[2:], reduction="none")
    pairs = torch.stack([tokens[:-2], tokens[1:-1]], dim=1)  # (w - 1, 2)
    one_back = F.cross_entropy(model(input_ids=pairs).logits[:, 1], tokens[2:], reduction="none")
    full = _token_losses(model, tokens[None])[0, 1:]  # the same w - 1 targets
    return tuple(math.exp(x.mean().item()) for x in (alone, one_back, full))


def context_use(model, ids: list[int], passage: int = 32, window: int = 512) -> ContextUse:
    model.eval()
    first, repeat = copy_losses(model, ids, passage)
    return ContextUse(passage, first, repeat, *context_perplexities(model, ids, window))


def check_probe_sizes(passage: int, window: int) -> None:
    """Both readings need at least two tokens to have a next-token loss: below that every loss is the
    mean of nothing (NaN), so such a probe is refused instead of printing a table of NaN."""
    for flag, value in (("--passage", passage), ("--window", window)):
        if value < 2:
            raise CocaEvalError(f"{flag} {value}: must be at least 2 tokens")


def probe_fits(length: int, passage: int, window: int) -> bool:
    """Whether a document of ``length`` tokens holds two readings of a passage and a full window."""
    return length > max(2 * passage, window + 1)
