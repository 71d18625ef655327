"""Table building blocks: best-in-bold, grouping, merging runs, Table 5 names and totals, definitions."""

from __future__ import annotations

import pytest
from report_fixtures import fixed_runs, opencompass_run

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.report import canonical, display, opencompass_tables
from coca_eval.report import ReportDefinition, load_definition
from coca_eval.report.assemble import make_tables
from coca_eval.report.intervals import cell_interval
from coca_eval.report.latex import latex_escape
from coca_eval.report.layout import arrange
from coca_eval.report.runs import merge_runs
from coca_eval.results import Cell, Run, save_run
from coca_eval.tables import best_positions, cell_grid, methods_by_lengths


def cell(value=None, status="ok", method="m", length=512, metric="ppl", **extra) -> Cell:
    return Cell(task="ppl", method=method, metric=metric, length=length, value=value, status=status, **extra)


def test_best_is_lowest_perplexity_or_highest_accuracy_ties_share_and_failures_never_win():
    column = [cell(9.251), cell(status="oom"), cell(9.249), cell(12.0)]
    assert best_positions(column, higher=False, digits=2) == {0, 2}  # both print as 9.25
    assert best_positions(column, higher=True, digits=2) == {3}
    assert best_positions([cell(3.0), None], higher=False, digits=2) == set()  # a lone value is not "best"


def test_grid_keeps_run_order_and_methods_by_lengths_prints_failures():
    cells = [cell(3.0, method="b", length=1024), cell(status="inf", method="b"), cell(2.0, method="a")]
    grid = cell_grid(cells)
    assert grid.rows == ["b", "a"] and grid.columns == [512, 1024]
    frame = methods_by_lengths(cells)
    assert frame.loc["b"].tolist() == ["inf", "3.00"] and frame.loc["a"].tolist() == ["2.00", ""]


def test_arrange_puts_ungrouped_methods_last_under_other():
    groups = [("G1", ["c", "missing", "a"])]
    assert arrange(["a", "b", "c"], groups) == [("G1", ["c", "a"]), ("Other", ["b"])]
    assert arrange(["a", "b"], []) == [(None, ["a", "b"])]


def test_merge_refuses_conflicting_duplicates_and_keeps_identical_ones(tmp_path):
    ppl, _ = fixed_runs(tmp_path)
    assert len(merge_runs([ppl, ppl]).cells) == 12
    changed = Run(cells=[cell(99.0, method="ALibi", dataset="pg19")])
    save_run(changed, tmp_path / "other.json")
    with pytest.raises(CocaEvalError, match="differs between"):
        merge_runs([ppl, tmp_path / "other.json"])
    relabelled = merge_runs([ppl], {"ALibi": "ALiBi (ours)"})
    assert "ALiBi (ours)" in {c.method for c in relabelled.cells}


def test_delta_vs_an_unknown_method_is_a_user_error(tmp_path):
    runs = merge_runs(fixed_runs(tmp_path))
    with pytest.raises(CocaEvalError, match="--delta-vs 'nope': no such method"):
        make_tables(runs, ReportDefinition(delta_vs="nope"))


@pytest.mark.parametrize(
    "name, shown, category",
    [
        ("SuperGLUE_COPA_ppl", "COPA", "Reasoning"),
        ("AX_b", "AX_b", "Reasoning"),
        ("cmnli", "CMNLI", "Reasoning"),
        ("csl-dev", "CSL", "Understanding"),
        ("FewCLUE_chid_ppl", "CHID", "Language"),
        ("ceval", "C-Eval", "Examination"),
        ("C-Eval", "C-Eval", "Examination"),
        ("gsm8k", "gsm8k", "Other"),
    ],
)
def test_opencompass_dataset_names_map_to_the_paper(name, shown, category):
    assert display(name) == (shown, category)
    assert canonical("SuperGLUE_AX_g_ppl") == "axg"


def test_table5_groups_categories_and_totals(tmp_path):
    runs = merge_runs([opencompass_run(tmp_path)])
    (table,) = opencompass_tables(runs.cells, ReportDefinition())
    assert table.columns == ["LLaMA-7B", "LLaMA+CoCA"]
    assert [(r.group, r.label) for r in table.rows] == [
        ("Reasoning", "COPA"),
        ("Reasoning", "AX_b"),
        ("Understanding", "CSL"),
        ("Examination", "MMLU"),
        (None, "Total"),
    ]
    assert [e.text for e in table.rows[-1].entries] == ["216.9", "192.1"]
    assert [e.bold for e in table.rows[2].entries] == [False, True]  # CSL: 58.5 beats 52.4
    (with_paper,) = opencompass_tables(runs.cells, ReportDefinition(paper=["table5"]))
    assert len(with_paper.rows) == 18 and with_paper.columns[2] == "LLaMA-7B (paper)"
    assert [e.text for e in with_paper.rows[-1].entries] == ["", "", "776.2", "785.7", "791.2", "797.4"]


def test_intervals_come_from_the_cell_or_are_computed():
    recorded = Cell(task="passkey", method="m", metric="accuracy", length=512, value=50.0, n=10,
                    detail={"wilson95": [10.0, 90.0]})  # fmt: skip
    assert cell_interval(recorded) == (10.0, 90.0)
    bare = Cell(task="passkey", method="m", metric="accuracy", length=512, value=50.0, n=10)
    low, high = cell_interval(bare)  # points, as the value
    assert low == pytest.approx(23.66, abs=0.1) and high == pytest.approx(76.34, abs=0.1)
    assert cell_interval(cell(status="oom")) is None


def test_definitions_load_by_name_and_reject_unknown_fields(tmp_path):
    shipped = load_definition("coca-table1")
    assert shipped.paper == ["table1", "table2"] and shipped.groups[1].name == "Fine-tuning LLM"
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\ncolour: red\n")
    with pytest.raises(CocaEvalError, match="invalid at colour"):
        load_definition(str(bad))
    with pytest.raises(CocaEvalError, match="not found"):
        load_definition("no-such-definition")
    with pytest.raises(CocaEvalError, match="--distance-ranges"):
        ReportDefinition().with_overrides(distance_ranges=0)
    assert ReportDefinition(intervals=True).with_overrides(intervals=False, digits=3).intervals is True


def test_latex_escape():
    assert latex_escape("NTK & CoCA_2 50% {x}") == r"NTK \& CoCA\_2 50\% \{x\}"


def test_trained_context_from_the_run_the_preset_or_the_checkpoint(tmp_path):
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text('{"max_position_embeddings": 256}')
    methods = [
        {"label": "preset", "model": "smollm2-135m"},
        {"label": "local", "model": str(checkpoint)},
        {"label": "recorded", "model": str(checkpoint), "trained_context": 512},
        {"label": "unknown", "model": "org/not-here"},
    ]
    save_run(Run(config={"task": "passkey", "methods": methods}), tmp_path / "run.json")
    runs = merge_runs([tmp_path / "run.json"])
    assert [runs.trained_context(m["label"]) for m in methods] == [8192, 256, 512, None]
    assert runs.trained_context("not-in-any-run") is None
