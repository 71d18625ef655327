"""Effective context length: RULER's headline number, read two ways from one method's cells.

RULER averages the task scores (0-100) at each length and calls a model's effective length the
longest length whose average reaches a threshold (85.6, Llama-2-7B's average at 4k). Its tables read
as "every length up to it passes": a model failing at 8k but passing again at 16k is effective to 4k,
not 16k, and a model failing at the shortest length is effective below it (``None`` here, "<4k" in a
table). Both readings agree on the monotone curves RULER reports; we take the prefix one, since a
length past a failure is not one the model can be trusted at.

**Ours** asks the same of a one-sided 95 % lower confidence bound on the average instead of the
average itself, so a length counts only when the samples show it above the threshold, not when a few
lucky samples put it there. The bound: the average over T tasks of their mean per-sample scores
``s`` in [0, 1] has variance ``(1/T^2) sum_t Var(s_t)/n_t``, and a score in [0, 1] with mean ``mu``
has variance at most ``mu (1 - mu)`` (equality for right/wrong scores). With ``n`` samples per task
that gives ``Var <= mu (1 - mu) / (T n)`` by concavity, whatever mix of partial credits the tasks
give; the bound is then Wilson's score bound for a proportion over ``N = T n`` trials (for unequal
counts ``N = T^2 / sum_t 1/n_t``, the same variance at equal task means). Why not a bootstrap or a plain
normal bound on the mean: both collapse to the point estimate when every sample is right (no spread,
no width), which is exactly where a small run would claim a length it has not shown; Wilson's bound
stays below 100 and needs no resampling. Its coverage is checked by simulation in the tests.

**Samples that share a story** (BABILong's questions of one bAbI story, each recording it as
``story``) are not independent: a task's ``n`` is then its effective count, n over the cluster-robust
design effect (:func:`~coca_eval.intervals.clustered_trials`), in the cell's interval and in this bound.

**Under ``--samples auto``** a cell's sample count was chosen by its scores, and Wilson's bound, which
holds at a count fixed in advance, no longer does. There each task's anytime-valid confidence sequence
(:mod:`coca_eval.sequential`) is read at level ``1 - alpha / T``, over its scores in the order they were
visited: by the union bound all T hold at once with probability at least ``1 - alpha``, whatever the
stops, and then the average of their lower ends is below the average of the true means. Conservative
(two-sided intervals, a union bound), but valid; its coverage is checked by simulation too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scipy.special import ndtri  # the normal quantile, as scipy.stats' norm gives it, without scipy.stats

from coca_eval.intervals import clustered_trials, wilson_mean_bounds
from coca_eval.results import Cell

CONFIDENCE = 0.95
CLUSTER = "story"  # the record key naming a sample's cluster, where a family's samples come in clusters


@dataclass(frozen=True)
class LengthScore:
    """One length's average over the tasks (0-100) and its lower bound; None when a task's cell at
    this length is missing or failed (the length then counts as not passing)."""

    length: int
    average: float | None
    lower: float | None
    tasks: int


def wilson_lower(mean: float, trials: float, confidence: float = CONFIDENCE) -> float:
    """One-sided Wilson score lower bound for a mean ``mean`` in [0, 1] over ``trials``."""
    return wilson_mean_bounds(mean, trials, float(ndtri(confidence)))[0]


def score_interval(score: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Two-sided interval (0-100) for one task cell's score from ``n`` samples, or an effective count
    (see the module doc)."""
    low, high = wilson_mean_bounds(score / 100, n, float(ndtri(0.5 + confidence / 2)))
    return 100 * low, 100 * high


def record_trials(records: Sequence[dict]) -> float:
    """The effective number of a cell's sample records: their count, or where they name their clusters
    (``story``) the count the cluster-robust variance gives (see the module doc)."""
    if records and all(CLUSTER in r for r in records):
        return clustered_trials([float(r["score"]) for r in records], [r[CLUSTER] for r in records])
    return float(len(records))


def cell_trials(cell: Cell) -> float:
    """A cell's effective number of samples (a cell without its samples: its ``n``)."""
    samples = cell.detail.get("samples") or []
    return record_trials(samples) if samples else float(cell.n or 1)


def average_lower_bound(
    task_scores: Sequence[Sequence[float]],
    confidence: float = CONFIDENCE,
    trials: Sequence[float] | None = None,
) -> float:
    """The lower bound (0-100) on the average over tasks of each task's mean sample score (see the
    module doc); ``task_scores`` holds every task's per-sample scores in [0, 1], ``trials`` each task's
    effective count (default: its number of scores)."""
    means = [sum(scores) / len(scores) for scores in task_scores]
    mean = min(1.0, max(0.0, sum(means) / len(means)))
    counts = [len(scores) for scores in task_scores] if trials is None else trials
    trials = len(task_scores) ** 2 / sum(1 / count for count in counts)
    return 100 * wilson_lower(mean, trials, confidence)


def sequential_lower_bound(task_scores: Sequence[Sequence[float]], confidence: float = CONFIDENCE) -> float:
    """The lower bound (0-100) on the average over tasks of their mean scores when each task's scores
    (in the order they were visited) were sampled until a rule stopped them (see the module doc)."""
    from coca_eval.sequential import confidence_sequence

    level = 1.0 - (1.0 - confidence) / len(task_scores)
    lows = [float(confidence_sequence(scores, level)[-1, 0]) for scores in task_scores]
    return 100 * sum(lows) / len(lows)


def visited_scores(cell: Cell) -> list[float]:
    """A sequential cell's per-sample scores in the order its rule saw them (a fixed cell's in index
    order: a confidence sequence holds at a fixed count too)."""
    if "sequential" not in cell.detail:
        return sample_scores(cell)
    scores = {int(s["index"]): float(s["score"]) for s in cell.detail["samples"]}
    return [scores[i] for i in cell.detail["sequential"]["visited"]]


def lower_bound(row: Sequence[Cell]) -> float:
    """One length's lower bound from its task cells: Wilson's for fixed counts, the confidence
    sequences' where any cell stopped by a rule."""
    if any("sequential" in cell.detail for cell in row):
        return sequential_lower_bound([visited_scores(cell) for cell in row])
    return average_lower_bound([sample_scores(cell) for cell in row], trials=[cell_trials(c) for c in row])


def sample_scores(cell: Cell) -> list[float]:
    """A cell's per-sample scores in [0, 1]; a cell without them (another tool's file) stands for
    ``n`` samples at its mean."""
    samples = cell.detail.get("samples") or []
    if samples:
        return [float(s["score"]) for s in samples]
    return [cell.value / 100] * int(cell.n or 1)


def length_scores(cells: Sequence[Cell], tasks: Sequence[str] | None = None) -> list[LengthScore]:
    """Every length's average and bound over ``tasks`` (default: every task among one method's
    ``cells``)."""
    tasks = list(tasks) if tasks is not None else sorted({c.dataset for c in cells})
    by_slot = {(c.dataset, c.length): c for c in cells}
    scores = []
    for length in sorted({c.length for c in cells}):
        row = [by_slot.get((task, length)) for task in tasks]
        if not row or any(cell is None or cell.status != "ok" for cell in row):
            scores.append(LengthScore(length, None, None, len(tasks)))
            continue
        average = sum(cell.value for cell in row) / len(row)
        lower = lower_bound(row)
        scores.append(LengthScore(length, average, lower, len(tasks)))
    return scores


def effective_length(scores: Sequence[LengthScore], threshold: float, bound: bool = False) -> int | None:
    """The longest length such that it and every shorter length reach ``threshold`` (the average, or
    with ``bound`` its lower bound); None when the shortest length already falls short."""
    effective = None
    for score in sorted(scores, key=lambda s: s.length):
        value = score.lower if bound else score.average
        if value is None or value < threshold:
            break
        effective = score.length
    return effective


def effective_text(length: int | None, scores: Sequence[LengthScore]) -> str:
    """``32k``, ``<4k`` (below the shortest length run) or ``-`` (nothing run)."""
    from coca_eval.lengths import format_length

    if not scores:
        return "-"
    if length is None:
        return f"<{format_length(min(s.length for s in scores))}"
    return format_length(length)
