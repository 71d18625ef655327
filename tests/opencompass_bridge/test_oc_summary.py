"""Importing an OpenCompass summary CSV: cells, missing results, and the Table 5 report from them."""

import pytest
from oc_fixtures import write_summary

from coca_eval import provenance
from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.summary import summary_cells
from coca_eval.opencompass.task import import_summary
from coca_eval.report import ReportDefinition, build_report
from coca_eval.results import load_run


def by_key(cells):
    return {(c.method, c.dataset): c for c in cells}


def test_summary_rows_become_cells_and_dashes_become_errors(tmp_path):
    cells = by_key(summary_cells(write_summary(tmp_path)))
    assert sorted({d for _, d in cells}) == ["AX_b", "BoolQ", "COPA", "CSL", "MMLU"]
    assert cells["LLaMA-7B", "COPA"].value == 72.0 and cells["LLaMA-7B", "COPA"].status == "ok"
    missing = cells["LLaMA_CoCA", "AX_b"]
    assert missing.status == "error" and missing.value is None
    assert "no result" in missing.detail["error"]
    assert cells["LLaMA_CoCA", "CSL"].value == 58.5  # the dev split, not csl_test's 51.0
    mmlu = cells["LLaMA-7B", "MMLU"]
    assert (mmlu.value, mmlu.metric, mmlu.detail["metric"]) == (35.0, "accuracy", "naive_average")
    assert all(c.task == "opencompass" for c in cells.values())


def test_subject_rows_stay_when_there_is_no_suite_average(tmp_path):
    text = "dataset,version,metric,mode,m\nlukaemon_mmlu_anatomy,ac766d,accuracy,ppl,30.00\n"
    (cell,) = summary_cells(write_summary(tmp_path, text))
    assert (cell.dataset, cell.value) == ("lukaemon_mmlu_anatomy", 30.0)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a,b,c\n1,2,3\n", "not an OpenCompass summary"),
        ("dataset,version,metric,mode\nCOPA,x,accuracy,ppl\n", "not an OpenCompass summary"),
    ],
)
def test_bad_summaries_are_user_errors(tmp_path, text, message):
    with pytest.raises(CocaEvalError, match=message):
        summary_cells(write_summary(tmp_path, text))
    with pytest.raises(CocaEvalError, match="not found"):
        summary_cells(tmp_path / "nope.csv")


def test_import_writes_the_contract(tmp_path):
    out = tmp_path / "t5.json"
    import_summary(write_summary(tmp_path), out)
    run = load_run(out)
    assert run.config["task"] == "opencompass" and len(run.cells) == 10
    assert sum(c.status == "error" for c in run.cells) == 1
    assert (run.git, run.git_dirty) == (provenance.git_revision(), provenance.git_dirty())


def test_table5_renders_in_markdown_and_latex_with_categories_and_total(tmp_path):
    out = tmp_path / "t5.json"
    import_summary(write_summary(tmp_path), out)
    report = build_report([out], ReportDefinition(plots=False), ["md", "latex"], tmp_path / "report")
    (table,) = report.tables
    assert table.columns == ["LLaMA-7B", "LLaMA_CoCA"]
    groups = [(r.group, r.label) for r in table.rows]
    assert groups[0] == ("Reasoning", "COPA") and ("Understanding", "CSL") in groups
    assert groups[-2:] == [("Examination", "MMLU"), (None, "Total")]
    # 72.0 + 57.5 + 52.4 + 69.4 + 35.0; no Total where a dataset failed
    assert [e.text for e in table.rows[-1].entries] == ["286.3", ""]
    markdown = (tmp_path / "report" / "report.md").read_text()
    for needle in ("*Reasoning*", "*Understanding*", "*Knowledge*", "*Examination*", "| Total", "error"):
        assert needle in markdown
    latex = (tmp_path / "report" / "opencompass.tex").read_text()
    assert r"\multicolumn{3}{l}{\textit{Reasoning}}" in latex
    assert r"\multicolumn{3}{l}{\textit{Examination}}" in latex
    total = next(line for line in latex.splitlines() if line.startswith("Total &"))
    assert "286.3" in total
    assert latex.splitlines()[latex.splitlines().index(total) - 1] == r"\midrule"
