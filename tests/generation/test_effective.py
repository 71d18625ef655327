"""Effective length both ways on hand-made cells, and the coverage of our lower bound by simulation."""

import numpy as np
import pytest

from coca_eval.generation.effective import (
    average_lower_bound,
    effective_length,
    effective_text,
    length_scores,
    score_interval,
)
from coca_eval.results import Cell

THRESHOLD = 85.6


def _cell(task: str, length: int, scores: list[float], status: str = "ok") -> Cell:
    value = 100 * sum(scores) / len(scores) if status == "ok" else None
    samples = [{"index": i, "answers": ["x"], "score": s} for i, s in enumerate(scores)]
    detail = {"samples": samples} if status == "ok" else {}
    return Cell(task="ruler", method="m", metric="score", length=length, dataset=task, value=value,
                status=status, n=len(scores), detail=detail)  # fmt: skip


def _cells(rows: dict[int, list[list[float]]]) -> list[Cell]:
    return [_cell(f"t{i}", n, s) for n, tasks in rows.items() for i, s in enumerate(tasks)]


def test_ruler_reads_the_average_and_stops_at_the_first_failure():
    many = 200
    cells = _cells({
        4096: [[1.0] * many, [1.0] * many],
        8192: [[1.0] * many, [0.8] * many],  # average 90
        16384: [[0.8] * many, [0.8] * many],  # 80: fails
        32768: [[1.0] * many, [1.0] * many],  # passes again, but after a failure
    })  # fmt: skip
    scores = length_scores(cells)
    assert [s.average for s in scores] == pytest.approx([100, 90, 80, 100])
    assert effective_length(scores, THRESHOLD) == 8192
    assert effective_text(8192, scores) == "8k"


def test_ours_needs_the_lower_bound_above_the_threshold():
    """Three right answers out of three per task average 100, but three samples show little: RULER's
    reading calls the length effective, the lower bound does not."""
    cells = _cells({1024: [[1.0] * 3] * 4, 2048: [[1.0] * 200] * 4})
    scores = length_scores(cells)
    assert effective_length(scores, THRESHOLD) == 2048
    assert scores[0].lower < THRESHOLD < scores[1].lower < 100
    assert effective_length(scores, THRESHOLD, bound=True) is None
    assert effective_text(None, scores) == "<1k"


def test_a_failed_or_missing_task_cell_fails_its_length():
    cells = _cells({4096: [[1.0] * 50, [1.0] * 50], 8192: [[1.0] * 50]})  # t1 missing at 8k
    cells.append(_cell("t0", 16384, [1.0], status="error"))
    scores = length_scores(cells, ["t0", "t1"])
    assert [s.average is None for s in scores] == [False, True, True]
    assert effective_length(scores, THRESHOLD) == 4096


def test_the_bound_equals_wilson_for_right_or_wrong_scores():
    from coca_eval.intervals import wilson_interval

    low, _ = wilson_interval(45, 50, confidence=0.90)  # two-sided 90 % = one-sided 95 %
    assert average_lower_bound([[1.0] * 45 + [0.0] * 5]) == pytest.approx(100 * low)
    assert score_interval(90.0, 50) == pytest.approx(tuple(100 * v for v in wilson_interval(45, 50)))


@pytest.mark.parametrize("samples", [3, 20, 100])
def test_the_lower_bound_covers_the_true_average(samples):
    """Over many simulated runs the bound exceeds the true average at most ~5 % of the time, for tasks
    of different difficulty with right/wrong or partial-credit scores (string_match_all over four
    values), and it is not needlessly loose: right/wrong scores near 0.9 miss about 5 % of the time."""
    rng = np.random.default_rng(samples)  # fixed draws: the rates below are reproducible
    configurations = [[0.9] * 13, list(np.linspace(0.5, 1.0, 13)), [1.0] * 6 + [0.8] * 7, [0.97] * 11]
    rates = {}
    for index, means in enumerate(configurations):
        for partial in (False, True):
            misses, reps = 0, 1000
            for _ in range(reps):
                if partial:
                    tasks = [rng.binomial(4, m, samples) / 4 for m in means]
                else:
                    tasks = [(rng.random(samples) < m).astype(float) for m in means]
                misses += average_lower_bound(tasks) > 100 * np.mean(means)
            rates[index, partial] = misses / reps
    assert max(rates.values()) <= 0.065, rates
    if samples >= 20:  # enough trials for the normal approximation: the level is used, not wasted
        assert rates[0, False] >= 0.02, rates


def test_under_auto_the_bound_covers_the_true_average_whatever_the_stops():
    """Tasks sampled until the threshold rule stops each (at 0.856, up to 60 samples, partial credit
    over four values, means around the threshold so the stops vary): the confidence-sequence bound on
    the average exceeds the true average at most 5 % of the time."""
    from coca_eval.generation.effective import sequential_lower_bound
    from coca_eval.sequential import StoppingRule, stop_point

    rng = np.random.default_rng(7)
    rule = StoppingRule(60, threshold=0.856)
    means = [0.80, 0.86, 0.95]
    misses, spent, reps = 0, set(), 200
    for _ in range(reps):
        tasks = []
        for m in means:
            scores = rng.binomial(4, m, 60) / 4
            tasks.append(scores[: stop_point(scores, rule).spent])
            spent.add(len(tasks[-1]))
        misses += sequential_lower_bound(tasks) > 100 * np.mean(means)
    assert len(spent) > 3  # the rule did stop at different counts
    assert misses / reps <= 0.05, misses


def test_a_sequential_row_reads_its_scores_in_visiting_order():
    """A stopped cell's scores are read in the order its rule visited them, not in index order (a
    confidence sequence depends on the order), and its bound is the confidence sequences' (wider than
    Wilson's here)."""
    from coca_eval.generation.effective import visited_scores

    cells = _cells({1024: [[1.0] * 30, [1.0] * 20 + [0.0] * 10]})
    fixed = length_scores(cells)[0].lower
    for cell in cells:
        cell.detail["sequential"] = {"visited": list(range(cell.n))[::-1]}
    assert visited_scores(cells[1]) == [0.0] * 10 + [1.0] * 20
    sequential = length_scores(cells)[0]
    assert sequential.average == pytest.approx(100 * 50 / 60)
    assert sequential.lower < fixed


def test_one_stopped_cell_makes_the_whole_row_sequential():
    """Wilson's bound holds only at counts fixed in advance: a row with any cell stopped by a rule is
    read with the confidence sequences, the fixed cells' scores in index order."""
    from coca_eval.generation.effective import lower_bound, sequential_lower_bound

    stopped, fixed = _cell("a", 1024, [1.0] * 12 + [0.0] * 3), _cell("b", 1024, [1.0] * 40)
    stopped.detail["sequential"] = {"visited": list(range(15))}
    expected = sequential_lower_bound([[1.0] * 12 + [0.0] * 3, [1.0] * 40])
    assert lower_bound([stopped, fixed]) == pytest.approx(expected)
    assert lower_bound([fixed, stopped]) == pytest.approx(
        sequential_lower_bound([[1.0] * 40, [1.0] * 12 + [0.0] * 3])
    )


def test_the_sequential_bound_splits_its_error_over_the_tasks():
    """T confidence sequences at level 1 - alpha / T (the union bound): the same scores in eight tasks
    give a lower bound than in one, each task read at 1 - 0.05 / 8."""
    from coca_eval.generation.effective import sequential_lower_bound
    from coca_eval.sequential import confidence_sequence

    scores = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.5, 1.0] * 5
    one, eight = sequential_lower_bound([scores]), sequential_lower_bound([scores] * 8)
    assert eight < one
    assert one == pytest.approx(100 * float(confidence_sequence(scores, 0.95)[-1, 0]))
    assert eight == pytest.approx(100 * float(confidence_sequence(scores, 1 - 0.05 / 8)[-1, 0]))


def test_a_length_exactly_at_the_threshold_reaches_it():
    from coca_eval.generation.effective import LengthScore

    scores = [LengthScore(4096, 85.6, 85.6, 1), LengthScore(8192, 85.5999, 85.5999, 1)]
    assert effective_length(scores, 85.6) == effective_length(scores, 85.6, bound=True) == 4096
