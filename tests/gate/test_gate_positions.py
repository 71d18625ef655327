"""``gate --from-position``: the loss past the trained length, paired over documents."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.gate import GateOptions, run_gate
from coca_eval.gate.positions import parse_from_position, past_position_pairs
from coca_eval.ppl.positions import position_buckets
from coca_eval.ppl.records import DocPart
from coca_eval.results import Cell, Run, save_run

LENGTH, TRAINED, DOCS = 4096, 2048, 8
POSITIONS = np.arange(LENGTH - 1)


def ppl_run(rise: float, method: str = "m", buckets: bool = True, trained: int | None = TRAINED) -> Run:
    """Eight documents of shared per-token losses; ``rise`` nats more past the trained context, with a
    per-document wobble so the paired differences are not all alike."""
    rng = np.random.default_rng(0)  # the same documents in every run
    parts = []
    for doc in range(DOCS):
        values = rng.gamma(4.0, 0.75, size=POSITIONS.size)
        values += (rise + 0.002 * math.sin(doc + 7 * rise)) * (POSITIONS >= TRAINED)
        part = DocPart(doc_id=f"doc{doc}", nll_sum=float(values.sum()), tokens=int(values.size),
                       positions=position_buckets(values, POSITIONS))  # fmt: skip
        parts.append(part.model_dump(exclude={"error"} if buckets else {"error", "positions"}))
    nll, tokens = sum(p["nll_sum"] for p in parts), sum(p["tokens"] for p in parts)
    detail = {"docs": parts, "mode": "truncated"}
    cell = Cell(task="ppl", method=method, metric="ppl", length=LENGTH, dataset="pg19",
                value=math.exp(nll / tokens), n=tokens, detail=detail)  # fmt: skip
    config = {
        "task": "ppl",
        "params": {"mode": "truncated"},
        "methods": [{"label": method, "trained_context": trained}],
    }
    return Run(config=config, cells=[cell])


OPTIONS = GateOptions(n_boot=500)


def test_a_rise_past_the_trained_length_fails_there_but_not_over_the_whole_window():
    base, cand = ppl_run(0.0), ppl_run(0.03)  # +3 % past 2k, about +1.5 % over all 4k positions
    whole = run_gate([(base, cand)], OPTIONS)
    assert not whole.failed and 0.01 < whole.cells[0].result.effect < 0.02
    past = run_gate(past_position_pairs([(base, cand)], "trained"), OPTIONS)
    (verdict,) = past.cells
    assert past.failed and verdict.verdict == "regression"
    assert verdict.result.effect == pytest.approx(math.expm1(0.03), abs=0.002)
    assert verdict.pair.base.method == "m (positions >= 2k)" and verdict.units == DOCS
    same = run_gate(past_position_pairs([(base, ppl_run(0.0))], 2048), OPTIONS)
    assert not same.failed and same.cells[0].result.effect == pytest.approx(0.0, abs=1e-12)


def test_a_position_before_any_rise_dilutes_it_like_the_whole_window():
    base, cand = ppl_run(0.0), ppl_run(0.03)
    early = run_gate(past_position_pairs([(base, cand)], 1024), OPTIONS).cells[0]
    later = run_gate(past_position_pairs([(base, cand)], 3072), OPTIONS).cells[0]
    assert early.result.effect < later.result.effect
    assert later.pair.base.detail["positions_from"] == 3072


def test_what_cannot_be_compared_is_one_line():
    base, cand = ppl_run(0.0), ppl_run(0.03)
    with pytest.raises(CocaEvalError, match="no loss by position"):
        past_position_pairs([(base, ppl_run(0.03, buckets=False))], "trained")
    with pytest.raises(CocaEvalError, match="not a bucket edge.*1024 and 1536"):
        past_position_pairs([(base, cand)], 1500)
    with pytest.raises(CocaEvalError, match="no trained context"):
        past_position_pairs([(ppl_run(0.0, trained=None), cand)], "trained")
    with pytest.raises(CocaEvalError, match="no ppl cell reaches"):
        past_position_pairs([(base, cand)], 4096)
    passkey = Run(config={"task": "passkey"}, cells=[])
    with pytest.raises(CocaEvalError, match="passkey runs keep no loss by position"):
        past_position_pairs([(passkey, passkey)], "trained")
    assert parse_from_position("trained") == "trained" and parse_from_position("2k") == 2048
    with pytest.raises(CocaEvalError, match="--from-position"):
        parse_from_position("late")


def test_the_command_line_gates_past_the_trained_length(tmp_path, capsys, monkeypatch):
    from coca_eval.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    save_run(ppl_run(0.0), tmp_path / "base.json")
    save_run(ppl_run(0.03), tmp_path / "cand.json")
    files = ["--baseline", str(tmp_path / "base.json"), "--candidate", str(tmp_path / "cand.json")]
    codes = []
    for extra in ([], ["--from-position", "trained"], ["--from-position", "1500"]):
        try:
            main(["gate", *files, "--bootstrap", "500", *extra])
        except SystemExit as exc:
            codes.append(exc.code or 0)
    out = capsys.readouterr()
    assert codes == [0, 1, 2], out.out + out.err
    assert "positions >= 2k" in out.out and "not a bucket edge" in out.err


def test_two_methods_of_one_run_compare_past_the_baseline_methods_trained_length():
    from coca_eval.gate.protocol import select_method

    plain, other = ppl_run(0.0, method="RoPE"), ppl_run(0.03, method="RoPE + PI")
    both = Run(config={**plain.config, "methods": plain.config["methods"] + other.config["methods"]},
               cells=plain.cells + other.cells)  # fmt: skip
    pair = (select_method(both, "RoPE", "baseline"), select_method(both, "RoPE + PI", "candidate"))
    (verdict,) = run_gate(past_position_pairs([pair], "trained"), OPTIONS).cells
    assert verdict.verdict == "regression" and verdict.pair.cand.method == "RoPE + PI (positions >= 2k)"
