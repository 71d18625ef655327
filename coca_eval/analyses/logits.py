"""Attention logits of one layer, a block of query rows at a time.

The full (h, N, N) score tensor of one layer is never built: rows go in blocks sized so one block of
scores stays near ``BLOCK_BYTES`` (at N = 64k and 9 heads that is 16 rows, not 64k). Each block is
reduced at once (per-distance sums, per-head maxima, softmax mass), which is all the analyses keep.
"""

from __future__ import annotations

import torch

from coca_eval.analyses.planes import repeat_heads

BLOCK_BYTES = 64 * 2**20


def row_blocks(heads: int, keys: int) -> int:
    """Query rows per block so that a float32 (h, rows, keys) block stays near BLOCK_BYTES."""
    return max(1, BLOCK_BYTES // (4 * heads * keys))


def visible(rows: torch.Tensor, keys: int, window: int | None) -> torch.Tensor:
    """Which keys each query row sees: causal, and within ``window`` on sliding layers -> (r, n) bool."""
    cols = torch.arange(keys, device=rows.device)  # (n,)
    seen = cols[None, :] <= rows[:, None]  # (r, n)
    if window:
        seen &= cols[None, :] > rows[:, None] - window  # (r, n)
    return seen


def _scores(query: torch.Tensor, key: torch.Tensor, start: int, stop: int, scaling: float) -> torch.Tensor:
    """(1, h, n, d) x (1, h, n, d) -> (h, rows, n) float32 logits of rows [start, stop)."""
    return torch.matmul(query[0, :, start:stop].float(), key[0].float().transpose(-1, -2)) * scaling


def logit_sums_by_distance(
    query: torch.Tensor, key: torch.Tensor, scaling: float, edges: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum and count of causal logits (all heads) per distance bin [edges[i], edges[i+1]) -> (B,), (B,).

    Raw logits, masked only by causality: the decay question is what q.k does with distance, also
    beyond a sliding window that hides it from the softmax."""
    key = repeat_heads(key, query.shape[1])  # (1, h, n, d)
    n, heads = query.shape[2], query.shape[1]
    bins = edges.numel() - 1
    sums = torch.zeros(bins, dtype=torch.float64)  # (B,)
    counts = torch.zeros(bins, dtype=torch.float64)  # (B,)
    step = row_blocks(heads, n)
    for start in range(0, n, step):
        stop = min(n, start + step)
        rows = torch.arange(start, stop)  # (r,)
        distance = rows[:, None] - torch.arange(n)[None, :]  # (r, n)
        causal = distance >= 0  # (r, n)
        which = torch.bucketize(distance.clamp(min=0), edges, right=True) - 1  # (r, n) bin index
        block = _scores(query, key, start, stop, scaling).sum(dim=0).double().cpu()  # (r, n) over heads
        sums += torch.bincount(which[causal], weights=block[causal], minlength=bins)[:bins]  # (B,)
        counts += heads * torch.bincount(which[causal], minlength=bins)[:bins].double()  # (B,)
    return sums, counts


def head_extremes(
    query: torch.Tensor,
    key: torch.Tensor,
    scaling: float,
    window: int | None,
    near: int,
    last_rows: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per head: the largest visible logit over all rows, and the softmax mass that the last
    ``last_rows`` queries put on their ``near`` nearest keys (mean over those rows) -> (h,), (h,)."""
    key = repeat_heads(key, query.shape[1])  # (1, h, n, d)
    heads, n = query.shape[1], query.shape[2]
    top = torch.full((heads,), -torch.inf)  # (h,)
    mass = torch.zeros(heads, dtype=torch.float64)  # (h,)
    step, first_tail = row_blocks(heads, n), max(0, n - last_rows)
    for start in range(0, n, step):
        stop = min(n, start + step)
        rows = torch.arange(start, stop, device=query.device)  # (r,)
        scores = _scores(query, key, start, stop, scaling)  # (h, r, n)
        scores.masked_fill_(~visible(rows, n, window), -torch.inf)  # (h, r, n)
        top = torch.maximum(top, scores.amax(dim=(1, 2)).cpu())  # (h,)
        tail = rows >= first_tail  # (r,)
        if tail.any():
            probs = scores[:, tail].softmax(dim=-1)  # (h, t, n)
            nearby = rows[tail, None] - torch.arange(n, device=query.device)[None, :] < near  # (t, n)
            mass += (probs * nearby).sum(dim=(1, 2)).double().cpu()  # (h,)
    return top, mass / min(last_rows, n)
