"""Plots: the files exist in both formats, and the passkey splits behind Fig 5/6 count correctly."""

from __future__ import annotations

import numpy as np
import pytest
from report_fixtures import fixed_runs

from coca_eval.passkey.bins import depth_matrix, range_accuracy, window_points
from coca_eval.report import ReportDefinition, build_report


def sample(distance: int, correct: bool, depth: float = 0.5) -> dict:
    return {"distance": distance, "correct": correct, "depth": depth}


def test_distance_ranges_split_at_the_edges():
    rows = [
        (2048, sample(d, c)) for d, c in [(0, True), (511, False), (512, True), (2048, True), (1500, False)]
    ]
    accuracy, counts = range_accuracy(rows, np.linspace(0, 2048, 5))
    assert counts.tolist() == [2, 1, 1, 1]  # 2048 falls in the last, closed range
    assert accuracy.tolist() == [50.0, 100.0, 0.0, 100.0]  # points
    empty, none = range_accuracy(rows[:1], np.linspace(0, 2048, 5))
    assert none.tolist() == [1, 0, 0, 0] and np.isnan(empty[1:]).all()


def test_inside_and_outside_the_trained_window():
    rows = [
        (1024, sample(100, True)),
        (1024, sample(900, False)),
        (2048, sample(1500, True)),
        (2048, sample(10, False)),
    ]
    assert window_points(rows, 512, inside=True) == [(1024, 100.0), (2048, 0.0)]
    assert window_points(rows, 512, inside=False) == [(1024, 0.0), (2048, 100.0)]
    assert window_points(rows, 4096, inside=False) == []


def test_depth_matrix_bins_by_requested_depth():
    rows = [(512, sample(0, True, 0.05)), (512, sample(0, False, 0.95)), (1024, sample(0, True, 1.0))]
    matrix = depth_matrix(rows, [512, 1024], bins=2)
    assert matrix[0].tolist()[0] == 100.0 and matrix[1].tolist() == [0.0, 100.0] and np.isnan(matrix[0, 1])


@pytest.mark.parametrize("trained, expected_extra", [(None, []), (1024, ["passkey_trained_window"])])
def test_report_writes_every_plot_as_png_and_svg(tmp_path, trained, expected_extra):
    definition = ReportDefinition(trained_context=trained)
    output = build_report(fixed_runs(tmp_path), definition, ["md"], tmp_path / "out")
    names = ["ppl_vs_length", "passkey_vs_length", "passkey_depth_heatmap", "passkey_distance_ranges"]
    assert [name for name, _ in output.plots] == names + expected_extra
    for name in names + expected_extra:
        png, svg = tmp_path / "out" / "plots" / f"{name}.png", tmp_path / "out" / "plots" / f"{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert "<svg" in svg.read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    assert "![Perplexity vs evaluation length, pg19 (log2 length axis)](plots/ppl_vs_length.png)" in md


def test_paper_tables_are_drawn_like_runs_but_delta_tables_are_not(tmp_path):
    definition = ReportDefinition(paper=["table1", "table3", "table4"])
    output = build_report(fixed_runs(tmp_path), definition, [], tmp_path / "out")
    paper = [name for name, _ in output.plots if name.startswith("paper_")]
    assert paper == ["paper_table1_ppl", "paper_table4_ppl", "paper_table4_passkey"]
    assert (tmp_path / "out" / "plots" / "paper_table1_ppl.svg").read_text().count("<path") > 20


@pytest.mark.parametrize("context, drawn", [(1024, True), (None, False), (1 << 20, False)])
def test_ppl_plot_marks_the_trained_context_inside_the_range(tmp_path, context, drawn):
    from report_fixtures import ppl_cell

    from coca_eval.ppl.plots import ppl_plots

    cells = [ppl_cell("A", n, v) for n, v in [(512, 10.0), (1024, 11.0), (2048, 40.0)]]
    ppl_plots(cells, tmp_path, context_of=lambda method: context)
    svg = (tmp_path / "ppl_vs_length.svg").read_text()
    assert ("trained context (1k)" in svg) is drawn


def test_methods_that_score_the_same_stay_visible_side_by_side(tmp_path):
    """Two methods scoring the same at every length would draw one line over the other; the second is
    drawn a little to the right, dashed, with its own marker, and its legend says whose line it equals."""
    from report_fixtures import ppl_cell

    from coca_eval.report.plots import SAME_LINE_SHIFT, length_plot

    values = [(512, 10.0), (1024, 11.0), (2048, 40.0)]
    cells = [ppl_cell(m, n, v) for m in ("A", "B", "C") for n, v in values]
    cells[-1] = ppl_cell("C", 2048, 41.0)  # C differs at one length: drawn where it is
    ax = length_plot(cells, "title", "ppl")
    lines = {line.get_gid(): line for line in ax.get_lines()}
    a, b, c = lines["A"], lines["B"], lines["C"]
    assert list(b.get_xdata()) == [x * SAME_LINE_SHIFT for x in a.get_xdata()]
    assert list(b.get_ydata()) == list(a.get_ydata()) and b.get_label() == "B (= A)"
    assert b.get_linestyle() == "--" and b.get_marker() != a.get_marker()
    assert list(c.get_xdata()) == [512, 1024, 2048] and c.get_label() == "C"
