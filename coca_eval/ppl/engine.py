"""Runs a window plan through a backend and returns one NLL per scored token.

Windows of the same shape are stacked into batches of ``batch_size`` (no padding, so batching cannot
change which tokens a position attends to). Sums are kept in float64.

Which tokens were scored is a mask of its own (:class:`TokenScores`), never a NaN in the values: a
model that overflows gives NaN scores, and those must stay visible as failures, not read as "not
scored" (which would drop them from the sum and the token count alike).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np
import torch

from coca_eval.backends.base import ScoringBackend
from coca_eval.ppl.windows import Window


@dataclass(frozen=True)
class TokenScores:
    """Per-token NLL of one document: ``nll[j]`` is meaningful where ``scored[j]`` (0.0 elsewhere)."""

    nll: np.ndarray  # float64 (T,)
    scored: np.ndarray  # bool (T,)

    @property
    def values(self) -> np.ndarray:
        """The scored tokens' NLLs, in document order (non-finite ones included)."""
        return self.nll[self.scored]

    @property
    def positions(self) -> np.ndarray:
        """The document positions of :attr:`values`."""
        return np.flatnonzero(self.scored)


def _shape(window: Window) -> tuple[int, int, int]:
    return window.length, window.first_logit, window.n_scored


def _batches(plan: Sequence[Window], batch_size: int) -> list[list[Window]]:
    """Consecutive runs of same-shaped windows, cut into batches of at most ``batch_size``."""
    batches = []
    for _, run in groupby(plan, key=_shape):
        run = list(run)
        batches += [run[i : i + batch_size] for i in range(0, len(run), batch_size)]
    return batches


def _inputs(ids: Sequence[int], batch: list[Window], bos_id: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    rows, targets = [], []
    for w in batch:
        prefix = [bos_id] if w.bos else []
        rows.append(prefix + list(ids[w.start : w.end]))
        targets.append(list(ids[w.score_from : w.score_to]))
    return torch.tensor(rows, dtype=torch.long), torch.tensor(targets, dtype=torch.long)  # [B, N], [B, n]


def score_tokens(
    backend: ScoringBackend,
    ids: Sequence[int],
    plan: Sequence[Window],
    batch_size: int = 1,
    on_windows: Callable[[int], None] | None = None,
) -> TokenScores:
    """Per-token NLL of one document for every token the plan scores, with the mask of those tokens."""
    if any(w.bos for w in plan) and backend.bos_token_id is None:
        raise ValueError("the plan asks for BOS but the tokenizer has none")
    out, scored = np.zeros(len(ids)), np.zeros(len(ids), dtype=bool)
    for batch in _batches(plan, max(1, batch_size)):
        input_ids, targets = _inputs(ids, batch, backend.bos_token_id)
        nll = backend.score(input_ids, batch[0].first_logit, targets).numpy()  # [B, n]
        for w, row in zip(batch, nll, strict=False):
            out[w.score_from : w.score_to] = row
            scored[w.score_from : w.score_to] = True
        if on_windows is not None:
            on_windows(len(batch))
    return TokenScores(out, scored)
