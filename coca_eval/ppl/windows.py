"""Window plans: which tokens each forward pass sees and which of its predictions are scored.

A document is ``T`` token ids. A window feeds ``[BOS] + ids[start:end]`` (BOS when ``bos``) to the
model; target ``ids[j]`` is predicted by the position holding ``ids[j-1]`` (or by BOS when
``j == start``). Three plans, each matching a peer's definition exactly:

* ``strided`` (``S < L``; the Hugging Face perplexity guide, Press et al., the CoCA/YaRN scripts):
  windows of ``L`` positions start at 0, S, 2S, ...; the last one ends at the document end. The first
  window scores every token with a predecessor in it, each later one only the tokens no earlier window
  scored (its last ``S``). The logit at a window's last position is not used.
* ``disjoint`` (``S == L``; lm-eval's rolling loglikelihood): targets are cut into consecutive
  chunks of ``L``; each chunk is predicted by the ``L`` positions that end just before its last target,
  so every position's logit is used and the last chunk still gets a full window of context.
* ``truncated`` (YaRN's ``--truncate``): one window over the first ``L`` positions.

BOS policies: ``always`` (BOS opens every window and counts towards ``L``), ``never``, and ``first``
(BOS only before the document start: lm-eval's prefix token). In the sliding plans each target in
``[0, T)`` (``[1, T)`` with ``never``) is scored exactly once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    """Input ``[BOS]*bos + ids[start:end]``; scored targets ``ids[score_from:score_to]``."""

    start: int
    end: int
    score_from: int
    score_to: int
    bos: bool

    @property
    def length(self) -> int:
        """Positions fed to the model (BOS included)."""
        return self.end - self.start + int(self.bos)

    @property
    def first_logit(self) -> int:
        """Input position whose logit predicts ``ids[score_from]``."""
        return self.score_from - self.start - 1 + int(self.bos)

    @property
    def n_scored(self) -> int:
        return self.score_to - self.score_from


BOS_POLICIES = ("always", "never", "first")


def _window_bos(policy: str, index: int) -> bool:
    """``always``: BOS opens every window; ``first``: only the first (lm-eval's prefix token)."""
    return policy == "always" or (policy == "first" and index == 0)


def first_target(policy: str) -> int:
    """Without BOS nothing predicts the document's first token."""
    return 1 if policy == "never" else 0


def plan_strided(total: int, length: int, stride: int, policy: str) -> list[Window]:
    windows, scored_until, start = [], first_target(policy), 0
    while True:
        bos = _window_bos(policy, len(windows))
        end = min(start + length - int(bos), total)
        if end > scored_until:
            if scored_until < start + int(not bos):
                raise ValueError(
                    f"stride {stride} leaves token {scored_until} without context at length {length}"
                )
            windows.append(Window(start, end, scored_until, end, bos))
            scored_until = end
        if end == total:
            return windows
        start += stride


def plan_disjoint(total: int, length: int, policy: str) -> list[Window]:
    """Chunks ``[kL, (k+1)L)``, each predicted by the ``L`` positions ending just before its last target."""
    windows, chunk_from = [], first_target(policy)
    while chunk_from < total:
        chunk_to = min((chunk_from // length + 1) * length, total)
        bos = _window_bos(policy, len(windows))
        start = max(0, chunk_to - 1 - (length - int(bos)))
        windows.append(Window(start, chunk_to - 1, chunk_from, chunk_to, bos))
        chunk_from = chunk_to
    return windows


def plan_truncated(total: int, length: int, policy: str) -> list[Window]:
    bos = _window_bos(policy, 0)
    end = min(length - int(bos), total)
    return [Window(0, end, first_target(policy), end, bos)]


def disjoint(stride: int, length: int) -> bool:
    """The stride rule, stated once: a stride that reaches the window length (``S >= L``) cuts disjoint
    windows (lm-eval's rolling loglikelihood); a shorter one slides, each window scoring its last S."""
    return stride >= length


def disjoint_lengths(stride: int, lengths: Iterable[int]) -> list[int]:
    """The window lengths the stride reaches: their windows are disjoint, not sliding."""
    return [length for length in lengths if disjoint(stride, length)]


def plan_windows(total: int, length: int, stride: int, policy: str, mode: str = "sliding") -> list[Window]:
    """The plan for one document; ``stride >= length`` means disjoint windows."""
    if policy not in BOS_POLICIES:
        raise ValueError(f"unknown BOS policy {policy!r}")
    if length < 2 or stride < 1:
        raise ValueError("window length must be >= 2 and stride >= 1")
    if mode == "truncated":
        return plan_truncated(total, length, policy)
    if disjoint(stride, length):
        return plan_disjoint(total, length, policy)
    return plan_strided(total, length, stride, policy)
