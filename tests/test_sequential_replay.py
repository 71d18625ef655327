"""reports/zoo/sequential.md is what a fresh replay of the committed passkey runs gives."""

from __future__ import annotations

from pathlib import Path

from coca_eval.sequential import StoppingRule, stop_point, visiting_order
from coca_eval.sequential_replay import ordered_scores, replay_run, report
from coca_eval.taskspec import load_checked_run

ZOO = Path(__file__).resolve().parents[1] / "reports" / "zoo"


def test_the_committed_table_matches_a_fresh_replay():
    runs = sorted((ZOO / "runs").glob("*_passkey.json.gz"))
    assert len(runs) >= 4
    script = "bash reports/zoo/sequential.sh"
    assert (ZOO / "sequential.md").read_text() == report(runs, threshold=0.5, width=0.2, regenerate=script)


def test_a_replay_reads_the_samples_in_visiting_order():
    path = ZOO / "runs" / "table2_passkey.json.gz"
    cell = next(c for c in load_checked_run(path).cells if 20 < c.value < 80)  # read in points
    correct = {s["index"]: float(s["correct"]) for s in cell.detail["samples"]}
    scores = ordered_scores(cell, 0)
    assert scores == [correct[i] for i in visiting_order("passkey", 0, cell.length, 100)]
    row = next(r for r in replay_run(path, 0.5, 0.2) if r.cell == cell)
    assert row.threshold == stop_point(scores, StoppingRule(100, threshold=0.5))
    assert row.width == stop_point(scores, StoppingRule(100, target_width=0.2))
