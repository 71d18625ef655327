"""Loss by position: each document's NLL summed per position bucket of the windows that scored it.

A scored token's *position* is the input position (BOS counted) whose logit predicts it, so a token at
position ``q`` is predicted from ``q + 1`` positions of context, and positions ``>= trained context``
are the ones a model never saw in training. Buckets start at the edges ``0, 1, 2, 3, 4, 6, 8, 12, 16,
24, ...`` (powers of two and their midpoints), so a curve over them reads evenly on a log axis. The
position-scheme papers draw this curve far past the trained length (``--mode truncated`` at one long
length gives it from one forward pass per document).

A document's buckets are stored sparse (the buckets it has tokens in, by their first position) in
float64 sums and exact integer counts: the counts add up to the document's scored tokens exactly, the
sums to its ``nll_sum`` up to float rounding (:data:`SUM_TOLERANCE`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from coca_eval.ppl.windows import Window

SUM_TOLERANCE = 1e-9  # relative: the bucket sums against the document's sum (summed in another order)


def _edges():
    yield from (0, 1, 2, 3)
    k = 2
    while True:
        yield from (2**k, 3 * 2 ** (k - 1))
        k += 1


def bucket_edges(up_to: int) -> list[int]:
    """Every bucket edge ``<= up_to`` and the first one beyond it: 0..4, then ``2^k`` and ``3 * 2^(k-1)``."""
    edges = []
    for edge in _edges():
        edges.append(edge)
        if edge > up_to:
            return edges


def is_edge(position: int) -> bool:
    return position >= 0 and bucket_edges(position)[-2] == position


def bucket_end(start: int) -> int:
    """The edge after the edge ``start`` (a bucket holds positions ``start <= q < bucket_end(start)``)."""
    return bucket_edges(start)[-1]


def window_positions(plan: Sequence[Window], total: int) -> np.ndarray:
    """Each document token's position in the window that scored it (-1 where none did)."""
    positions = np.full(total, -1, dtype=np.int64)
    for w in plan:
        positions[w.score_from : w.score_to] = w.first_logit + np.arange(w.n_scored)
    return positions


class PositionBuckets(BaseModel):
    """One document's NLL by position bucket: ``starts[i]`` is the first position of bucket ``i``
    (an edge of :func:`bucket_edges`), ``nll[i]`` the NLL summed over its ``tokens[i]`` scored tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    starts: list[int]
    nll: list[float]
    tokens: list[int]

    @model_validator(mode="after")
    def _buckets(self) -> PositionBuckets:
        if not len(self.starts) == len(self.nll) == len(self.tokens):
            raise ValueError("starts, nll and tokens differ in length")
        if any(b <= a for a, b in zip(self.starts, self.starts[1:], strict=False)):
            raise ValueError("bucket starts must increase")
        if any(not is_edge(s) for s in self.starts):
            raise ValueError("a bucket start is not a bucket edge")
        if any(t < 1 for t in self.tokens) or not all(math.isfinite(x) for x in self.nll):
            raise ValueError("a bucket without tokens or with a non-finite sum")
        return self

    @property
    def total_nll(self) -> float:
        return math.fsum(self.nll)

    def agrees_with(self, nll_sum: float, tokens: int) -> bool:
        """Counts equal the document's exactly; sums to float rounding (:data:`SUM_TOLERANCE`)."""
        slack = SUM_TOLERANCE * max(abs(nll_sum), float(tokens))
        return sum(self.tokens) == tokens and abs(self.total_nll - nll_sum) <= slack


def position_buckets(values: np.ndarray, positions: np.ndarray) -> PositionBuckets:
    """The buckets of one document's scored token NLLs (``values``) at their window ``positions``."""
    edges = np.asarray(bucket_edges(int(positions.max(initial=0))), dtype=np.int64)
    index = np.searchsorted(edges, positions, side="right") - 1
    sums = np.bincount(index, weights=values.astype(np.float64), minlength=len(edges))
    counts = np.bincount(index, minlength=len(edges))
    used = np.flatnonzero(counts)
    return PositionBuckets(
        starts=[int(edges[i]) for i in used],
        nll=[float(sums[i]) for i in used],
        tokens=[int(counts[i]) for i in used],
    )


def past(buckets: PositionBuckets, start: int) -> tuple[float, int]:
    """NLL sum and token count over the positions ``>= start`` (a bucket edge)."""
    chosen = [i for i, s in enumerate(buckets.starts) if s >= start]
    return math.fsum(buckets.nll[i] for i in chosen), sum(buckets.tokens[i] for i in chosen)
