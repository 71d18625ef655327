"""Samples that share a story (BABILong's questions of one bAbI story) count as a cluster: a cell's
interval and the effective length's bound use the effective number of samples, n over the
cluster-robust design effect. Every expected value here is worked out by hand or is scipy's Wilson
interval at a count given by hand."""

import numpy as np
import pytest

from coca_eval.generation.cells import combine_cell
from coca_eval.generation.effective import length_scores
from coca_eval.intervals import clustered_trials, wilson_interval, wilson_mean_bounds
from coca_eval.results import Cell

BASE = {"task": "babilong", "method": "m", "metric": "accuracy", "length": 1024, "dataset": "qa1"}


def _records(scores: list[float], stories: list[int] | None = None) -> list[dict]:
    records = [{"index": i, "answers": ["x"], "score": s} for i, s in enumerate(scores)]
    if stories is not None:
        for record, story in zip(records, stories, strict=True):
            record["story"] = story
    return records


def _interval(records: list[dict]) -> list[float]:
    return combine_cell(BASE, records, {}).detail["interval95"]


def test_one_question_per_story_is_the_plain_wilson_interval():
    scores = [1.0] * 7 + [0.0] * 5
    assert clustered_trials(scores, list(range(12))) == 12
    low, high = wilson_interval(7, 12)
    assert _interval(_records(scores, list(range(12)))) == pytest.approx([100 * low, 100 * high], abs=1e-9)
    assert _interval(_records(scores, list(range(12)))) == _interval(_records(scores))  # no story recorded


def test_stories_whose_questions_agree_count_once_each():
    """Four stories of three questions, each story all right or all wrong (3 of 4 stories right):
    mean 3/4, cluster sums 3, 3, 3, 0; the robust variance is (3 x 0.75^2 + 2.25^2) / 144 = 6.75 / 144,
    and 0.75 x 0.25 / (6.75 / 144) = 4: the number of stories, and the interval is Wilson's for 3 of
    4."""
    scores = [1.0] * 9 + [0.0] * 3
    stories = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert clustered_trials(scores, stories) == pytest.approx(4)
    low, high = wilson_interval(3, 4)
    assert _interval(_records(scores, stories)) == pytest.approx([100 * low, 100 * high])
    plain_low, plain_high = wilson_interval(9, 12)
    assert high - low > plain_high - plain_low  # wider than twelve independent questions


def test_a_partly_clustered_cell_by_hand():
    """Stories [1, 1], [0, 0], [1], [0]: mean 1/2, robust variance ((2 - 1)^2 + (0 - 1)^2 + 0.25 +
    0.25) / 36 = 2.5 / 36, so the effective count is 0.25 x 36 / 2.5 = 3.6."""
    assert clustered_trials([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "d"]) == pytest.approx(3.6)


def test_no_spread_or_unlike_clusters_leave_the_count_at_n():
    """All right (the design effect cannot be estimated) or clusters less alike than independent
    answers (stories [1, 0], [1, 0], [1]: mean 3/5, robust variance 0.24 / 25, raw count 25): n."""
    assert clustered_trials([1.0] * 6, [0, 0, 0, 1, 1, 1]) == 6
    assert clustered_trials([1, 0, 1, 0, 1], [0, 0, 1, 1, 2]) == 5
    with pytest.raises(ValueError):
        clustered_trials([1.0, 0.0], [0])


def test_the_effective_length_bound_counts_stories_too():
    """One task, the four-story cell above: the one-sided 95 % bound is Wilson's two-sided 90 % lower
    end for 3 of 4, not for 9 of 12."""
    records = _records([1.0] * 9 + [0.0] * 3, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    cell = Cell(**BASE, value=75.0, n=12, detail={"samples": records})
    (score,) = length_scores([cell])
    assert score.lower == pytest.approx(100 * wilson_interval(3, 4, confidence=0.90)[0])


def test_the_clustered_interval_covers_where_the_plain_one_does_not():
    """Twenty stories of five questions, each story easy (0.95) or hard (0.25) with equal odds, true
    mean 0.6: Wilson's interval over 100 questions misses far more than 5 % of the time (its questions
    are not independent); over the effective count it holds its level."""
    rng = np.random.default_rng(3)
    stories = list(np.repeat(np.arange(20), 5))
    covered = {"plain": 0, "clustered": 0}
    reps = 800
    for _ in range(reps):
        easy = np.where(rng.random(20) < 0.5, 0.95, 0.25)
        scores = list((rng.random((20, 5)) < easy[:, None]).astype(float).ravel())
        mean = sum(scores) / 100
        for name, trials in (("plain", 100), ("clustered", clustered_trials(scores, stories))):
            low, high = wilson_mean_bounds(mean, trials, 1.959964)
            covered[name] += low <= 0.6 <= high
    assert covered["plain"] / reps < 0.85 and covered["clustered"] / reps > 0.92, covered
