"""The relative bar (HELMET, BABILong) at a shortest length too low to set one: a bar of 0 would read
every length as effective, so the reading is undefined with its reason; a small score the samples do
show above 0 still sets a bar of 85 % of it."""

from __future__ import annotations

from coca_eval.generation.relative import read_relative
from coca_eval.results import Cell


def _cell(task: str, length: int, scores: list[float], sequential: bool = False) -> Cell:
    samples = [{"index": i, "score": s} for i, s in enumerate(scores)]
    detail = {"samples": samples}
    if sequential:  # stopped by a rule: read through the confidence sequence of the visited order
        detail["sequential"] = {"visited": list(range(len(scores)))}
    value = 100 * sum(scores) / len(scores)
    return Cell(task="babilong", method="m", metric="accuracy", length=length, dataset=task, value=value,
                n=len(scores), detail=detail)  # fmt: skip


def test_nothing_right_at_the_shortest_length_has_no_bar_and_no_length():
    """Every sample wrong at 1k and 2k: before, the bar was 0 and the effective length 2k."""
    cells = [_cell(t, n, [0.0] * 6) for t in ("qa1", "qa2") for n in (1024, 2048)]
    reading = read_relative(cells, ["qa1", "qa2"], 85)
    assert (reading.bar, reading.effective) == (None, None)
    assert reading.effective_text == "undefined (no bar: 0 at 1k)"
    record = reading.record()
    assert record["undefined"] == "no bar: 0 at 1k" and record["effective"] is None and record["bar"] is None


def test_a_sequential_interval_reaching_0_has_no_bar_either():
    """One right answer in six under a stopping rule: average 16.7, but its confidence sequence's
    lower end is 0, so the samples do not show the model above 0 at the shortest length."""
    cells = [_cell("qa1", 1024, [1.0] + [0.0] * 5, True), _cell("qa1", 2048, [0.0] * 6, True)]
    reading = read_relative(cells, ["qa1"], 85)
    assert reading.effective is None and reading.bar is None
    assert reading.effective_text == "undefined (no bar: 16.7 at 1k, its 95 % lower bound 0)"


def test_a_small_score_shown_above_0_keeps_its_bar():
    """One right answer in six at a fixed count: Wilson's lower bound is above 0, so the bar is 85 % of
    16.67 = 14.17 and the shortest length, whose bound is below it, reads as below 1k."""
    cells = [_cell("qa1", 1024, [1.0] + [0.0] * 5), _cell("qa1", 2048, [1.0] + [0.0] * 5)]
    reading = read_relative(cells, ["qa1"], 85)
    assert round(reading.bar, 2) == 14.17 and reading.undefined is None
    assert reading.effective_text == "<1k"
