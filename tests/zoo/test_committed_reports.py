"""The zoo's committed report runs: they are in the repository, load through the result contract, and
still show what the README says they show.

These read committed data, not a model: they fail when a results file is missing from a checkout
(ignored by accident, say) or when a rerun changed the numbers the README quotes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coca_eval.results import load_run

ZOO = Path(__file__).resolve().parents[2] / "reports" / "zoo"
RUNS = ZOO / "runs"


COMMITTED = [
    "bar_heldout_ppl.json",
    "bar_train_ppl.json",
    "table1_ppl.json",
    "prope_heldout_ppl.json",
    "prope_outside_ppl.json",
]


@pytest.mark.parametrize("name", COMMITTED)
def test_every_report_run_is_committed_and_loads(name):
    run = load_run(RUNS / name)
    assert run.cells and all(c.status == "ok" for c in run.cells)


def ppl(run, method: str, length: int) -> float:
    (cell,) = [c for c in run.cells if c.method == method and c.length == length and c.metric == "ppl"]
    return cell.value


def test_the_committed_bar_run_shows_the_acceptance_bar():
    """zoo-rope at 8x its training length is at least 5x its perplexity at the training length, and far
    below the unigram floor of its tokenizer at 512 (282.5 on these books)."""
    run = load_run(RUNS / "bar_heldout_ppl.json")
    at_512, at_4k = ppl(run, "RoFormer", 512), ppl(run, "RoFormer", 4096)
    assert at_4k / at_512 >= 5.0
    assert at_512 < 282.5 / 5


def test_the_committed_table1_shows_the_readme_picture():
    """Table 1 in miniature as the README reads it: RoFormer breaks past its window, CoCA breaks
    several times less, ALiBi and NoPE stay flat, NoPE is far worse inside the window."""
    run = load_run(RUNS / "table1_ppl.json")
    assert ppl(run, "RoFormer", 16384) / ppl(run, "RoFormer", 512) >= 5.0
    assert ppl(run, "RoFormer", 16384) / ppl(run, "RoFormer + CoCA", 16384) >= 4.0
    for flat in ("ALiBi", "NoPE"):
        assert abs(ppl(run, flat, 16384) / ppl(run, flat, 512) - 1) < 0.05, flat
    assert ppl(run, "NoPE", 512) / ppl(run, "RoFormer", 512) >= 2.0
