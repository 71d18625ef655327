"""Anytime-valid intervals for a cell's mean score, and the rules that stop sampling once it is known.

A retrieval cell usually spends a fixed number of samples, whether its accuracy was settled after 20 or
needs 500. Stopping as soon as an interval looks good enough is *optional stopping*: a fixed-sample
interval (Wilson's, :mod:`coca_eval.intervals`) looked at after every round and acted on when it first
excludes a threshold misses the true accuracy far more often than its nominal 5 %, because among many
looks one is bound to stray. A *confidence sequence* is a sequence of intervals that hold the true mean
at every sample count at once with probability ``confidence``, so the interval at whatever count a data-
dependent rule stopped at is still valid.

The construction is the hedged-capital betting confidence sequence of Waudby-Smith & Ramdas (2023,
"Estimating means of bounded random variables by betting", JRSS-B, Theorem 3), chosen because it

* holds for any scores in [0, 1], not only 0/1 outcomes (a RULER sample scores the fraction of its
  needles found), with no variance assumption;
* adapts to the variance it sees, so near accuracy 0 or 1 (where passkey cells usually sit) it is
  far narrower than a Hoeffding-type bound, and it tracks the Wilson width within a small factor;
* is a product of one-step factors, so it is exact arithmetic on the scores in the order they came:
  a replay of a journal reproduces it to the bit.

For a candidate mean ``m`` two gamblers bet the scores will lie above and below ``m``:
``K+_t(m) = prod (1 + lam_i (x_i - m))`` and ``K-_t(m) = prod (1 - lam_i (x_i - m))``, with the
predictable plug-in bet ``lam_i = sqrt(2 log(2 / alpha) / (var_{i-1} i log(1 + i)))`` (the running
variance of the scores so far, started at 1/4) truncated at ``TRUNCATION / m`` and
``TRUNCATION / (1 - m)`` so no factor reaches zero. Under the true mean both are non-negative
martingales, so by Ville's inequality their hedged capital ``max(K+, K-) / 2`` ever reaches ``1 /
alpha`` with probability at most ``alpha``; every ``m`` whose capital has reached it is excluded for
good (the running intersection, valid by the same inequality). The set left over is an interval,
evaluated on a grid of ``GRID_POINTS`` candidate means and widened by one grid step on each side so the
grid can only make it wider.

Independence: the guarantee is for scores drawn independently with one mean. Tasks visit their samples in
a seeded random order (:func:`visiting_order`), so each visited sample is a uniform draw from the cell's
sample design and the running mean has no drift with depth or position; see ``docs/sequential.md``.

numpy does the arithmetic; no library (scipy, statsmodels) offers a betting confidence sequence.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coca_eval.errors import CocaEvalError

CONFIDENCE = 0.95
TRUNCATION = 0.5  # the paper's c in [1/2, 3/4]: the largest fraction of its capital a gambler bets
GRID_POINTS = 1001  # candidate means 0, 0.001, ..., 1
ROUND_SIZE = 10  # samples per round: the stopping rule looks after each round and at --max-samples
CONSTRUCTION = "betting confidence sequence (hedged capital, Waudby-Smith & Ramdas 2023)"


def predictable_bets(scores: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """The untruncated bet placed on each score, from the scores before it only (``[..., t]``)."""
    alpha = 1.0 - confidence
    t = np.arange(1, scores.shape[-1] + 1, dtype=np.float64)
    running_mean = (0.5 + np.cumsum(scores, axis=-1)) / (t + 1.0)
    running_var = (0.25 + np.cumsum((scores - running_mean) ** 2, axis=-1)) / (t + 1.0)
    var_before = np.concatenate([np.full(scores.shape[:-1] + (1,), 0.25), running_var[..., :-1]], axis=-1)
    return np.sqrt(2.0 * np.log(2.0 / alpha) / (var_before * t * np.log1p(t)))


def log_capital(scores: np.ndarray, means: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """Running maximum over time of the hedged log-capital against each candidate mean.

    ``scores`` is ``[..., t]`` in [0, 1], ``means`` is ``[g]``; the result is ``[..., t, g]``: entry
    ``[..., s, j]`` is the largest log-capital any gambler against ``means[j]`` held up to sample ``s``.
    A mean is excluded from the confidence sequence once its entry reaches ``log(1 / alpha)``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    if scores.size and (np.nanmin(scores) < 0.0 or np.nanmax(scores) > 1.0 or np.isnan(scores).any()):
        raise ValueError("scores must lie in [0, 1]")
    bets = predictable_bets(scores, confidence)[..., None]
    deviation = scores[..., None] - means
    with np.errstate(divide="ignore"):
        up = np.minimum(bets, TRUNCATION / means)
        down = np.minimum(bets, TRUNCATION / (1.0 - means))
    log_up = np.cumsum(np.log1p(up * deviation), axis=-2)
    log_down = np.cumsum(np.log1p(-down * deviation), axis=-2)
    hedged = np.maximum(log_up, log_down) + np.log(0.5)
    return np.maximum.accumulate(hedged, axis=-2)


def candidate_means(points: int = GRID_POINTS) -> np.ndarray:
    return np.linspace(0.0, 1.0, points)


def intervals_from_capital(capital: np.ndarray, means: np.ndarray, confidence: float) -> np.ndarray:
    """``[..., 2]`` (low, high) of the means whose capital stayed below ``log(1 / alpha)``, one grid step
    wider on each side; where no mean is left (probability at most ``alpha``) the whole range [0, 1]."""
    kept = capital < np.log(1.0 / (1.0 - confidence))
    step = means[1] - means[0]
    any_kept = kept.any(axis=-1)
    low = np.where(any_kept, means[np.argmax(kept, axis=-1)] - step, 0.0)
    high = np.where(any_kept, means[len(means) - 1 - np.argmax(kept[..., ::-1], axis=-1)] + step, 1.0)
    return np.stack([np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)], axis=-1)


def confidence_sequence(
    scores: Sequence[float], confidence: float = CONFIDENCE, points: int = GRID_POINTS
) -> np.ndarray:
    """``[t, 2]``: the anytime-valid interval for the mean after each of ``scores`` (in the order drawn)."""
    means = candidate_means(points)
    return intervals_from_capital(
        log_capital(np.asarray(scores, float), means, confidence), means, confidence
    )


@dataclass(frozen=True)
class StoppingRule:
    """When a cell has sampled enough: after each round of ``round_size`` samples (and at
    ``max_samples``), stop once the interval is narrower than ``target_width``, or once it lies
    wholly above or below ``threshold``. Exactly one of the two is set."""

    max_samples: int
    target_width: float | None = None
    threshold: float | None = None
    round_size: int = ROUND_SIZE
    confidence: float = CONFIDENCE

    def __post_init__(self) -> None:
        check_rule(self.max_samples, self.target_width, self.threshold)

    def looks(self) -> list[int]:
        """The sample counts after which the rule looks: every round's end, and ``max_samples``."""
        return sorted({*range(self.round_size, self.max_samples, self.round_size), self.max_samples})

    def decided(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Whether intervals ``(low, high)`` (arrays of any shape) settle the question the rule asks."""
        if self.target_width is not None:
            return np.asarray(high) - np.asarray(low) < self.target_width
        return (np.asarray(low) > self.threshold) | (np.asarray(high) < self.threshold)

    def verdict(self, interval: Sequence[float]) -> str | None:
        """What the interval decides (``above 0.5``, ``below 0.5``, ``narrower than 0.2``), or None."""
        low, high = interval
        if not self.decided(low, high):
            return None
        if self.target_width is not None:
            return f"narrower than {self.target_width:g}"
        return f"above {self.threshold:g}" if low > self.threshold else f"below {self.threshold:g}"

    def caption(self) -> str:
        """``up to 100 samples, stopping once the 95 % interval lies above or below 0.5``."""
        question = (
            f"is narrower than {self.target_width:g}"
            if self.target_width is not None
            else f"lies above or below {self.threshold:g}"
        )
        level = f"{self.confidence * 100:g} %"
        return f"up to {self.max_samples} samples, stopping once the {level} interval {question}"

    def describe(self) -> dict:
        """The rule as a cell's ``detail`` records it."""
        rule = {"max_samples": self.max_samples, "round_size": self.round_size, "confidence": self.confidence}
        if self.target_width is not None:
            return {**rule, "target_width": self.target_width}
        return {**rule, "threshold": self.threshold}


@dataclass(frozen=True)
class SequentialOutcome:
    """Where a rule stopped on a sequence of scores: samples spent, the decision and its interval."""

    spent: int
    decision: str  # the verdict, or "undecided at N" when max_samples came first
    interval: tuple[float, float]
    mean: float

    def detail(self, rule: StoppingRule) -> dict:
        return {
            **rule.describe(),
            "samples_spent": self.spent,
            "decision": self.decision,
            "interval": list(self.interval),
            "construction": CONSTRUCTION,
        }


def stop_point(scores: Sequence[float], rule: StoppingRule) -> SequentialOutcome | None:
    """The rule's outcome on ``scores`` (in visiting order), or None while it wants more than those.

    Looks only at round ends, so a replay of a longer sequence gives what a live run would have done.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        return None
    intervals = confidence_sequence(scores, rule.confidence)
    for look in rule.looks():
        if look > len(scores):
            return None
        interval = (float(intervals[look - 1, 0]), float(intervals[look - 1, 1]))
        decision = rule.verdict(interval)
        if decision is not None or look == rule.max_samples:
            decision = decision or f"undecided at {rule.max_samples}"
            return SequentialOutcome(look, decision, interval, float(scores[:look].mean()))
    return None


def check_rule(max_samples: int | None, target_width: float | None, threshold: float | None) -> None:
    """Refuse a rule that cannot be followed, with the option to fix in the message."""
    if isinstance(max_samples, bool) or not isinstance(max_samples, int) or max_samples < 1:
        raise CocaEvalError(f"--samples auto needs --max-samples, a positive integer (got {max_samples!r})")
    if (target_width is None) == (threshold is None):
        raise CocaEvalError(
            "--samples auto needs exactly one stopping rule: --target-width W (stop once the interval is "
            "narrower than W) or --threshold T (stop once it lies wholly above or below T)"
        )
    if target_width is not None and not 0.0 < target_width < 1.0:
        raise CocaEvalError(f"--target-width must lie in (0, 1) (got {target_width!r})")
    if threshold is not None and not 0.0 < threshold < 1.0:
        raise CocaEvalError(f"--threshold must lie in (0, 1) (got {threshold!r})")


def visiting_order(name: str, seed: int, length: int, count: int) -> list[int]:
    """The order in which a sequential cell draws its ``count`` sample indices: a shuffle seeded by
    (task, seed, length). Samples are usually laid out in index order by depth (stratified), so taking
    them in index order would spend the first rounds on shallow keys only and stop on a biased mean; in a
    seeded random order every prefix is a random subset of the whole design, and a rerun, a resume and
    a replay of a committed run all visit the same samples in the same order."""
    order = list(range(count))
    random.Random(f"coca-eval-{name}-order:{seed}:{length}:{count}").shuffle(order)
    return order
