"""`coca-eval gate`: exit codes, refusing incomparable runs, the JSON verdict and the step summary."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pytest
from test_gate_simulation import PPL_PARAMS, passkey_run, ppl_run

from coca_eval.results import save_run

TOKENS = np.full(12, 2000)
NLL = np.linspace(2.8, 3.4, 12)[None, :] + np.zeros((3, 1))
JITTER = 0.004 * np.sin(np.arange(36)).reshape(3, 12)  # a deterministic, sign-balanced "noise"


def write(tmp_path, name, run):
    path = tmp_path / f"{name}.json"
    save_run(run, path)
    return path


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def invoke(capsys, *args) -> Result:
    """The real entry point, in this process (no interpreter start-up per call): its exit code and output."""
    from coca_eval.cli import main

    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return Result(code, out.out, out.err)


@pytest.fixture
def gate(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")

    def run(base, cand, *extra):
        return invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--bootstrap", "500", *extra)

    return run


def test_same_numbers_pass_and_a_planted_rise_fails(gate, tmp_path):
    base = write(tmp_path, "base", ppl_run(NLL, TOKENS))
    same = write(tmp_path, "same", ppl_run(NLL + JITTER, TOKENS, method="other-label"))
    worse = write(tmp_path, "worse", ppl_run(NLL + np.log(1.05) + JITTER, TOKENS))
    passed = gate(base, same)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "PASS" in passed.stdout and "m -> other-label" in passed.stdout
    failed = gate(base, worse)
    assert failed.returncode == 1 and "REGRESSION" in failed.stdout and "+5.0" in failed.stdout


def test_a_rise_within_tolerance_passes(gate, tmp_path):
    base = write(tmp_path, "base", ppl_run(NLL, TOKENS))
    cand = write(tmp_path, "cand", ppl_run(NLL + np.log(1.01), TOKENS))
    assert gate(base, cand, "--max-ppl-rise", "2%").returncode == 0
    assert gate(base, cand, "--max-ppl-rise", "0.5%").returncode == 1


def test_json_verdict_and_github_step_summary(gate, tmp_path, monkeypatch):
    hits = np.ones((3, 100), dtype=bool)
    worse = hits.copy()
    worse[:, :30] = False  # a 30-point drop on every length
    base, cand = write(tmp_path, "b", passkey_run(hits)), write(tmp_path, "c", passkey_run(worse))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = gate(base, cand, "--json")
    assert result.returncode == 1
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "regression" and verdict["exit_code"] == 1
    cells = verdict["cells"]
    assert [c["length"] for c in cells] == [512, 1024, 2048]
    assert all(c["effect"] == pytest.approx(30.0) and c["verdict"] == "regression" for c in cells)
    assert (verdict["max_acc_drop"], verdict["max_acc_drop_unit"]) == (5.0, "points")
    assert all(c["p_value"] == pytest.approx(2.0**-30) for c in cells)  # exact McNemar, 30 losses 0 wins
    text = summary.read_text()
    assert text.startswith("### coca-eval gate: REGRESSION") and "| passkey 2k  | m " in text


@pytest.mark.parametrize(
    "change, message",
    [
        ({"params": {**PPL_PARAMS, "stride": 256}}, "stride 512 vs 256"),
        ({"params": {**PPL_PARAMS, "seed": 1}}, "seed 0 vs 1"),
        ({"doc_ids": True}, "documents or their scored tokens differ"),
        ({"tokens": True}, "documents or their scored tokens differ"),
        ({"lengths": True}, "cells differ"),
    ],
)
def test_incomparable_ppl_runs_exit_2(gate, tmp_path, change, message):
    base = write(tmp_path, "base", ppl_run(NLL, TOKENS))
    cand_run = ppl_run(NLL[:2] if change.get("lengths") else NLL, TOKENS + 5 * change.get("tokens", 0))
    if "params" in change:
        cand_run = ppl_run(NLL, TOKENS, params=change["params"])
    if change.get("doc_ids"):
        cand_run.cells[0].detail["docs"][0]["doc_id"] = "another-book"
    result = gate(base, write(tmp_path, "cand", cand_run))
    assert result.returncode == 2
    assert result.stderr.startswith("coca-eval: error: incomparable runs") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_incomparable_passkey_and_mixed_runs_exit_2(gate, tmp_path):
    hits = np.ones((3, 20), dtype=bool)
    base = write(tmp_path, "base", passkey_run(hits))
    other = passkey_run(hits)
    other.cells[1].detail["samples"][3]["key"] = 99999
    assert "passkey samples" in gate(base, write(tmp_path, "keys", other)).stderr
    ppl = write(tmp_path, "ppl", ppl_run(NLL, TOKENS))
    mixed = gate(base, ppl)
    assert mixed.returncode == 2 and "the baseline is a passkey run, the candidate ppl" in mixed.stderr


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-ppl-rise", "lots"], "--max-ppl-rise must be a number"),
        (["--max-acc-drop", "150%"], "--max-acc-drop is in points and must be between 0 and 100"),
        (["--max-acc-drop", "0.05"], "0.05 reads as a fraction; did you mean 5?"),
        (["--alpha", "1.5"], "--alpha must be between 0 and 1"),
        (["--candidate", "x.json"], "one --candidate for every --baseline"),
    ],
)
def test_usage_errors_exit_2(gate, tmp_path, extra, message):
    path = write(tmp_path, "run", ppl_run(NLL, TOKENS))
    result = gate(path, path, *extra)
    assert result.returncode == 2 and message in result.stderr


def test_missing_baseline_file_exits_2(gate, tmp_path):
    path = write(tmp_path, "run", ppl_run(NLL, TOKENS))
    result = gate(tmp_path / "nope.json", path)
    assert result.returncode == 2 and "results file not found" in result.stderr


def test_two_methods_of_one_run_are_gated_against_each_other(gate, tmp_path):
    plain = ppl_run(NLL, TOKENS, method="+ dynamic NTK")
    better = ppl_run(NLL - np.log(1.10) + JITTER, TOKENS, method="+ dynamic NTK & CoCA")
    both = write(tmp_path, "both", plain.model_copy(update={"cells": plain.cells + better.cells}))
    rows = ("--baseline-method", "+ dynamic NTK", "--candidate-method", "+ dynamic NTK & CoCA")
    improved = gate(both, both, *rows, "--json")
    assert improved.returncode == 0
    verdict = json.loads(improved.stdout)
    assert verdict["cells"] and all(c["effect"] < -0.08 for c in verdict["cells"])
    swapped = ("--baseline-method", rows[3], "--candidate-method", rows[1])
    assert gate(both, both, *swapped).returncode == 1  # the plain row is 10 % worse than CoCA's
    missing = gate(both, both, "--baseline-method", "ALiBi", "--candidate-method", rows[3])
    assert missing.returncode == 2 and "'ALiBi' is not a method" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_the_runs_can_be_given_as_baseline_then_candidate(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    base = write(tmp_path, "base", ppl_run(NLL, TOKENS))
    worse = write(tmp_path, "worse", ppl_run(NLL + np.log(1.05) + JITTER, TOKENS))
    assert invoke(capsys, "gate", base, base, "--bootstrap", "500").returncode == 0
    failed = invoke(capsys, "gate", base, worse, "--bootstrap", "500")
    assert failed.returncode == 1 and "REGRESSION" in failed.stdout
    for wrong in ([base], [base, worse, worse], [base, worse, "--baseline", base, "--candidate", worse], []):
        refused = invoke(capsys, "gate", *wrong)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused
        assert "BASELINE CANDIDATE" in refused.stderr


def test_a_gate_that_could_not_see_a_drop_says_inconclusive(gate, tmp_path):
    """Two runs scoring 0 everywhere, and runs of 10 samples (the paired interval of no change reaches
    some 30 points, past the 5-point tolerance), rule out nothing: INCONCLUSIVE, exit 0, and exit 1
    under --require-power. 100 samples of the same answers keep the interval within 4 points: PASS."""
    zeros = np.zeros((2, 100), dtype=bool)
    few = np.ones((1, 10), dtype=bool)
    many = np.ones((1, 100), dtype=bool)
    cases = {
        "zeros": (write(tmp_path, "z1", passkey_run(zeros)), write(tmp_path, "z2", passkey_run(zeros))),
        "few": (write(tmp_path, "f1", passkey_run(few)), write(tmp_path, "f2", passkey_run(few))),
    }
    for name, (base, cand) in cases.items():
        result = gate(base, cand)
        assert result.returncode == 0, name
        assert "INCONCLUSIVE" in result.stdout.splitlines()[0], result.stdout
        assert gate(base, cand, "--require-power").returncode == 1, name
    assert "baseline scores 0" in gate(*cases["zeros"]).stdout
    powered = write(tmp_path, "m", passkey_run(many))
    result = gate(powered, powered, "--require-power")
    assert result.returncode == 0 and "PASS" in result.stdout.splitlines()[0], result.stdout


def test_at_80_columns_no_number_or_verdict_is_split(tmp_path):
    """A standard terminal (or a piped log) is 80 columns: the gate's table then stacks the method under
    its cell and the interval under the change, so every value and verdict stays whole on one line."""
    import io
    import re

    from rich.console import Console

    from coca_eval.gate import make_options, rich_summary, run_gate, verdict_json

    hits = np.ones((2, 40), dtype=bool)
    worse = hits.copy()
    worse[0, :20] = False
    label = "RoFormer + dynamic NTK & CoCA (a long label)"
    pair = (passkey_run(hits, method=label), passkey_run(worse, method=label + " fine-tuned"))
    result = run_gate([pair], make_options("2%", "5", 0.05, 0, 500))
    sink = io.StringIO()
    Console(file=sink, width=80).print(rich_summary(result, 80))
    lines = sink.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), sink.getvalue()
    verdict = verdict_json(result)
    pieces = [f"{c['p_adjusted']:.3g}" for c in verdict["cells"]] + ["REGRESSION", "INCONCLUSIVE"]
    for piece in pieces:
        assert any(re.search(rf"(^|[\s│]){re.escape(piece)}($|[\s│])", line) for line in lines), piece
    intervals = re.findall(r"\[[-+]\d+\.\d\d, [-+]\d+\.\d\d\]", sink.getvalue())
    assert len(intervals) == len(verdict["cells"])  # each interval whole, on one line
    wide = io.StringIO()
    Console(file=wide, width=300).print(rich_summary(result, 300))
    assert "95% CI" in wide.getvalue() and "method" in wide.getvalue()  # the full table where it fits


def test_the_accuracy_tolerance_is_in_points_and_its_help_names_every_family(capsys, monkeypatch):
    """``--max-acc-drop`` applies to every task scored in points, not to passkey alone: its help says
    points and names each such task the gate tests (LongBench v2 under LongBench)."""
    from coca_eval.taskspec import TASKS

    monkeypatch.setenv("COLUMNS", "200")
    shown = " ".join(invoke(capsys, "gate", "--help").stdout.split()).lower()
    help_text = shown.split("--max-acc-drop", 1)[1].split("--alpha", 1)[0]
    scored = [n for n in TASKS.names() if TASKS.get(n).unit == "points" and TASKS.get(n).gate is not None]
    assert len(scored) >= 7 and "in points (0-100)" in help_text and "[default: 5]" in help_text
    assert [n for n in scored if n.split("_")[0] not in help_text] == []
