"""Item 15: `opencompass import` takes its model columns from the CSV header, refuses a row that does
not fit the header in one line naming the row, and turns nan/inf entries into error cells."""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

HEADER = "dataset,version,metric,mode,A,B\n"
COPA = "COPA,9f3618,accuracy,ppl,72.00,66.00\n"
BOOLQ = "BoolQ,314b96,accuracy,ppl,69.40,62.40\n"

# (CSV text, fragments the one-line error must hold)
BAD = {
    "row missing the model columns": (HEADER + COPA + "RTE,y\n", ["line 3", "'RTE'", "2 fields", "has 6"]),
    "first row one result short": (HEADER + "COPA,9f3618,accuracy,ppl,72.00\n" + BOOLQ, ["line 2", "'COPA'"]),
    "row one field long": (HEADER + COPA + "RTE,y,accuracy,ppl,1,2,3\n", ["line 3", "7 fields"]),
    "model named twice": (
        "dataset,version,metric,mode,A,A\n" + COPA,
        ["model column 'A' appears more than once"],
    ),
    "model column without a name": ("dataset,version,metric,mode,A,\n" + COPA, ["column 2", "no name"]),
}


def _import(tmp_path, capsys, text: str):
    summary = tmp_path / "summary.csv"
    summary.write_text(text)
    out = tmp_path / "out" / "t5.json"
    return invoke(capsys, "opencompass", "import", summary, "--output", out), summary, out


@pytest.mark.parametrize("case", sorted(BAD))
def test_row_or_header_that_does_not_fit_is_one_line_exit_2(tmp_path, capsys, case):
    text, fragments = BAD[case]
    result, summary, out = _import(tmp_path, capsys, text)
    assert_one_line_error(result, 2, str(summary), *fragments)
    assert not out.parent.exists()


def test_short_separator_row_is_still_skipped(tmp_path, capsys):
    result, _, out = _import(tmp_path, capsys, HEADER + "--------- Exam ---------\n" + COPA + BOOLQ)
    assert result.returncode == 0, result.stderr
    methods = {(c["method"], c["dataset"]) for c in json.loads(out.read_text())["cells"]}
    assert methods == {("A", "COPA"), ("B", "COPA"), ("A", "BoolQ"), ("B", "BoolQ")}


@pytest.mark.parametrize("entry", ["nan", "inf", "-inf", "NaN", "Infinity"])
def test_non_finite_entry_is_an_error_cell(tmp_path, capsys, entry):
    result, _, out = _import(tmp_path, capsys, HEADER + f"COPA,9f3618,accuracy,ppl,{entry},66.00\n" + BOOLQ)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    cells = {(c["method"], c["dataset"]): c for c in json.loads(out.read_text())["cells"]}
    bad = cells["A", "COPA"]
    assert (bad["status"], bad["value"]) == ("error", None)
    assert bad["detail"]["error"] == f"not a finite number: {entry!r}"
    assert (cells["B", "COPA"]["status"], cells["B", "COPA"]["value"]) == ("ok", 66.0)
    assert cells["A", "BoolQ"]["value"] == 69.4
