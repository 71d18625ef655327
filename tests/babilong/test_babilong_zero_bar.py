"""A BABILong run that answers nothing at its shortest length has no bar (85 % of 0 would make every
length effective): the table prints the effective length as undefined with its reason, the run's
config keeps the reason, and the gate does not read a regression from such a baseline."""

from __future__ import annotations

import json

import pytest

from coca_eval.gate import run_gate
from coca_eval.gate.options import make_options
from coca_eval.results import load_run
from tests.ruler.scripted_backend import MODE
from tests.ruler.test_ruler_cli import _cli

pytestmark = pytest.mark.usefixtures("scripted")

RUN = ("babilong", "--model", "zoo-rope", "--backend", "scripted", "--tasks", "qa1,qa2",
       "--lengths", "1k,1500", "--samples", "20", "--seed", "5")  # fmt: skip


def _summary_row(out: str) -> list[str]:
    row = next(line for line in out.splitlines() if line.startswith("│ RoFormer"))
    return [c.strip() for c in row.split("│") if c.strip()]


def test_a_run_answering_nothing_prints_and_records_no_effective_length(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(MODE, "answer", "empty")
    code, out, err = _cli(capsys, *RUN, "--output", str(tmp_path / "zero.json"))
    assert code == 0, err
    assert _summary_row(out) == ["RoFormer", "0.0", "0.0", "undefined (no bar: 0 at 1k)"]
    (reading,) = json.loads((tmp_path / "zero.json").read_text())["config"]["effective_length"][
        "methods"
    ].values()
    assert reading["undefined"] == "no bar: 0 at 1k"
    assert reading["effective"] is None and reading["bar"] is None


def test_the_gate_cannot_find_a_regression_from_a_baseline_without_a_bar(capsys, tmp_path, monkeypatch):
    """The baseline answers nothing; the candidate answers everything. There is no baseline length to
    fall from, so the check passes and its reason names the baseline's missing bar."""
    monkeypatch.setitem(MODE, "answer", "empty")
    _cli(capsys, *RUN, "--output", str(tmp_path / "base.json"))
    monkeypatch.setitem(MODE, "answer", "planted")
    _cli(capsys, *RUN, "--output", str(tmp_path / "cand.json"))
    result = run_gate([(load_run(tmp_path / "base.json"), load_run(tmp_path / "cand.json"))],
                      make_options("2%", "99", 0.05, 0, 1000))  # fmt: skip
    (check,) = result.runs
    assert not check.failed and check.baseline == "undefined (no bar: 0 at 1k)"
    assert check.candidate == "1500"  # its own reading at 85 % of its own 100 at 1k
    assert "undefined (no bar: 0 at 1k)" in check.reason and "cannot regress" in check.reason
