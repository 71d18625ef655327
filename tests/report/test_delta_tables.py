"""Table 3 style tables: rows against one baseline row, or chosen rows each against its own baseline."""

from __future__ import annotations

import pytest
from report_fixtures import PPL, fixed_runs
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.report import ReportDefinition
from coca_eval.report.assemble import make_tables
from coca_eval.report.runs import merge_runs

DYN, BOTH = "RoFormer + dynamic NTK", "RoFormer + dynamic NTK & CoCA"


def table_named(tables, name):
    (table,) = [t for t in tables if t.name == name]
    return table


def texts(row):
    return [entry.text for entry in row.entries]


def test_each_pair_shows_its_baseline_then_the_candidate_minus_it(tmp_path):
    """The paper's Table 3 layout: the baseline row keeps its own numbers, the candidate is printed as
    its difference to that baseline at each length; a failed cell is shown as itself, not a number."""
    definition = ReportDefinition(delta_pairs=[(BOTH, DYN), ("RoFormer", "ALibi")])
    table = table_named(make_tables(merge_runs(fixed_runs(tmp_path)), definition), "ppl_paired_delta")
    assert [row.label for row in table.rows] == [
        DYN,
        f"{BOTH} (delta vs {DYN})",
        "ALibi",
        "RoFormer (delta vs ALibi)",
    ]
    assert texts(table.rows[0]) == ["19.66", "22.30", "38.00"]
    expected = [f"{b - d:+.2f}" for b, d in zip(PPL[BOTH], PPL[DYN], strict=True)]
    assert texts(table.rows[1]) == expected == ["+0.45", "-1.49", "-12.12"]
    assert texts(table.rows[3]) == ["+0.97", "+390.23", "inf"]  # RoFormer's inf stays inf


def test_without_pairs_there_is_no_paired_table_and_delta_vs_is_unchanged(tmp_path):
    runs = merge_runs(fixed_runs(tmp_path))
    tables = make_tables(runs, ReportDefinition(delta_vs="RoFormer"))
    assert not any(t.name.endswith("paired_delta") for t in tables)
    delta = table_named(tables, "ppl_delta")
    assert texts(delta.rows[0]) == ["19.66", "411.50", "inf"]
    assert [row.label for row in delta.rows][1] == "ALibi (delta)"


@pytest.mark.parametrize("pair", [("nope", DYN), (BOTH, "nope")])
def test_a_pair_naming_an_unknown_row_is_a_user_error(tmp_path, pair):
    runs = merge_runs(fixed_runs(tmp_path))
    with pytest.raises(CocaEvalError, match="--delta-pair 'nope': no such method"):
        make_tables(runs, ReportDefinition(delta_pairs=[pair]))


def test_the_cli_writes_the_paired_table_and_refuses_a_missing_row(tmp_path, capsys):
    ppl, _ = fixed_runs(tmp_path)
    out = tmp_path / "report"
    args = ["report", ppl, "--out", out, "--format", "csv", "--no-plots", "--delta-pair", BOTH, DYN]
    result = invoke(capsys, *args)
    assert result.returncode == 0, result.stderr
    lines = (out / "ppl_paired_delta.csv").read_text().splitlines()
    assert lines[2].endswith("+0.45,-1.49,-12.12"), lines
    bad = invoke(capsys, "report", ppl, "--out", out, "--no-plots", "--delta-pair", BOTH, "nobody")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--delta-pair 'nobody': no such method" in bad.stderr
