"""Two runs of the same answers judged by two judges: the gate refuses to pair them (the judge is a
strict key), pairs two runs of one judge, and ``coca-eval judge-agreement`` (the example of
docs/judges.md) says how often the two judges' verdicts agree, per cell and over all, with Cohen's
kappa; runs of other answers are not read as judge agreement."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli
from coca_eval.gate import GateOptions, IncomparableRuns, run_gate
from coca_eval.judging.agreement import agreement
from coca_eval.results import load_run
from tests.aa_lcr import aa_lcr_doubles
from tests.aa_lcr.aa_lcr_doubles import FakeJudge, smoke_rows

ARGS = (
    "aa-lcr", "--model", "zoo-rope", "--backend", "aa-lcr-oracle", "--chat-template", "none",
    "--lengths", "1k,2k", "--samples", "6", "--answer-tokens", "32", "--judge-protocol", "1.0",
)  # fmt: skip


def _verdicts(flipped: set[str]) -> dict[str, str]:
    """CORRECT on the questions the oracle answers (odd ids), flipped on the ``flipped`` ids."""
    out = {}
    for row in smoke_rows():
        right = int(row["question_id"]) % 2 == 1
        out[row["question"]] = "CORRECT" if right != (row["question_id"] in flipped) else "INCORRECT"
    return out


def _run(tmp_path, name: str, judge: FakeJudge) -> object:
    aa_lcr_doubles.register()
    output = tmp_path / f"{name}.json"
    result = CliRunner().invoke(cli, [*ARGS, "--judge", judge.url, "--output", str(output)])
    assert result.exit_code == 0, result.output
    return output


@pytest.fixture
def runs(tmp_path):
    first, second = FakeJudge(_verdicts(set()), "judge-a"), FakeJudge(_verdicts({"2", "5"}), "judge-b")
    try:
        yield _run(tmp_path, "a", first), _run(tmp_path, "b", second), _run(tmp_path, "a2", first)
    finally:
        first.close()
        second.close()


def test_the_gate_refuses_runs_judged_by_different_judges(runs):
    a, b, a_again = (load_run(path) for path in runs)
    with pytest.raises(IncomparableRuns, match="judge_id 'server:judge-a' vs 'server:judge-b'"):
        run_gate([(a, b)], GateOptions())
    paired = run_gate([(a, a_again)], GateOptions())
    assert len(paired.cells) == 2 and not paired.regressed


def test_judge_agreement_counts_the_samples_whose_verdicts_agree(runs):
    a, b, _ = (load_run(path) for path in runs)
    found = {entry.where: entry for entry in agreement(a, b)}
    whole = found["all"]
    assert whole.n == 12 and whole.agreed == 8  # questions 2 and 5 flipped at both lengths
    assert whole.correct_share(0) == pytest.approx(0.5)
    assert whole.correct_share(1) == pytest.approx(0.5)  # one flipped each way
    assert whole.kappa == pytest.approx((8 / 12 - 0.5) / (1 - 0.5))
    assert found["RoFormer aa_lcr @ 1024"].agreed == 4
    result = CliRunner().invoke(cli, ["judge-agreement", str(runs[0]), str(runs[1])])
    assert result.exit_code == 0, result.output
    assert "all: 8/12 verdicts agree (66.7 %)" in result.output
    assert "judge A: server:judge-a" in result.output


def test_samples_of_other_answers_are_left_out_of_agreement(runs):
    a, b = json.loads(runs[0].read_text()), json.loads(runs[1].read_text())
    for cell in b["cells"]:
        cell["detail"]["samples"][0]["output"] = "another answer"
    runs[1].write_text(json.dumps(b))
    whole = agreement(load_run(runs[0]), load_run(runs[1]))[-1]
    assert whole.n == 10 and whole.other_outputs == 2
    assert a["cells"][0]["detail"]["samples"][0]["output"] != "another answer"
