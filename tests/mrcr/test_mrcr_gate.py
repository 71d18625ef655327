"""The gate on two MRCR runs over the same conversations: the candidate's per-sample ratios are paired
with the baseline's and their mean drop is tested (the scores are graded, not right or wrong), so a
candidate that copies the wrong needle fails, and an identical one passes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli
from coca_eval.gate.options import make_options
from coca_eval.gate.protocol import CellPair
from coca_eval.generation.gate import paired_mean_test
from coca_eval.results import load_run
from tests.mrcr import mrcr_oracle_backend
from tests.mrcr.mrcr_oracle_backend import TEMPLATE


def _run(tmp_path, name: str, wrong: bool):
    template = tmp_path / "chat.jinja"  # one file for every run: its fingerprint is in the protocol
    if not template.exists():
        template.write_text(TEMPLATE)
    mrcr_oracle_backend.register()
    if wrong:
        mrcr_oracle_backend.WRONG.update({"2needle", "4needle"})
    try:
        args = ["mrcr", "--model", "zoo-rope", "--backend", "mrcr-oracle", "--needles", "2,4",
                "--lengths", "1k,2k", "--samples", "10", "--chat-template", str(template)]  # fmt: skip
        result = CliRunner().invoke(cli, [*args, "--output", str(tmp_path / name)])
    finally:
        mrcr_oracle_backend.WRONG.clear()
    assert result.exit_code == 0, result.output
    return tmp_path / name


def _gate(base, cand):
    return CliRunner().invoke(cli, ["gate", "--baseline", str(base), "--candidate", str(cand)])


def test_a_candidate_copying_the_wrong_needle_fails_and_an_equal_one_passes(tmp_path):
    base, same = _run(tmp_path, "base.json", False), _run(tmp_path, "same.json", False)
    wrong = _run(tmp_path, "wrong.json", True)
    assert _gate(base, same).exit_code == 0, _gate(base, same).output
    failed = _gate(base, wrong)
    assert failed.exit_code == 1, failed.output
    assert "REGRESSION (5 regressed" in failed.output  # four cells and the effective length
    assert "fell from 2k to <1k" in " ".join(failed.output.split())


def test_the_paired_test_is_the_mean_ratio_drop_in_points(tmp_path):
    base = load_run(_run(tmp_path, "base.json", False))
    cand = load_run(_run(tmp_path, "wrong.json", True))
    cell_b, cell_c = base.cells[0], cand.cells[0]
    n, result = paired_mean_test(CellPair(cell_b, cell_c), make_options("2%", "99", 0.05, 0, 1000), 0)
    drops = [
        b["score"] - c["score"]
        for b, c in zip(cell_b.detail["samples"], cell_c.detail["samples"], strict=True)
    ]
    assert n == 10 and result.effect == pytest.approx(100 * sum(drops) / 10)
    assert 0 < result.effect < 100 and result.low <= result.effect <= result.high
