"""The gate on two BABILong runs: samples paired per cell, and the run check on the effective length,
the candidate read at the baseline's bar (85 % of the baseline's average at its shortest length)."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.babilong.params import make_babilong_params
from coca_eval.gate import run_gate
from coca_eval.gate.options import make_options
from coca_eval.methods import make_method
from coca_eval.results import load_run
from tests.helmet.test_helmet_gate import _failing

pytestmark = pytest.mark.usefixtures("scripted")

LOOSE = make_options("2%", "99", 0.05, 0, 1000)  # no cell's drop is beyond this tolerance


def _run(path):
    params = make_babilong_params({"tasks": "qa1,qa2", "lengths": "1000,1500", "samples": 20, "seed": 5})
    evaluate(
        "babilong", [make_method("zoo-rope", "none", "zoo", "float32", "scripted")], params, path, Runtime()
    )
    return load_run(path)


def test_an_equal_run_passes_with_its_effective_length(tmp_path):
    base, cand = _run(tmp_path / "base.json"), _run(tmp_path / "cand.json")
    result = run_gate([(base, cand)], LOOSE)
    (check,) = result.runs
    assert (check.baseline, check.candidate, check.failed) == ("1500", "1500", False)
    assert check.name.startswith("effective length (95 % bound, bar 85.0 = 85 % of the baseline at 1000)")
    assert result.exit_code == 0 and {v.verdict for v in result.cells} == {"pass"}


def test_a_candidate_worse_everywhere_falls_at_the_baselines_bar(tmp_path):
    base = _run(tmp_path / "base.json")
    cand = _failing(base, {1000, 1500}, 8)  # 60 everywhere: its own bar (51) would keep 1500
    result = run_gate([(base, cand)], LOOSE)
    assert all(v.verdict == "pass" for v in result.cells)
    (check,) = result.runs
    assert check.failed and (check.baseline, check.candidate) == ("1500", "<1000")
    assert result.exit_code == 1
