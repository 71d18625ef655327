"""The gate on cells sampled until a stopping rule was met (``--samples auto``): two runs that stopped at
different counts are paired on the samples both hold, and those must still be the same samples."""

from __future__ import annotations

import numpy as np
import pytest
from test_gate_simulation import passkey_run

from coca_eval.gate.compare import run_gate
from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import IncomparableRuns
from coca_eval.gate.stats import mcnemar_drop
from coca_eval.results import Run
from coca_eval.sequential import visiting_order

SAMPLES = 100
AUTO = {"samples": "auto", "max_samples": SAMPLES, "threshold": 0.5, "seed": 0, "template": "landmark"}


def stopped(run: Run, spent: int) -> Run:
    """``run`` as if every cell had stopped after ``spent`` samples of its visiting order."""
    cells = []
    for cell in run.cells:
        kept = set(visiting_order("passkey", 0, cell.length, SAMPLES)[:spent])
        samples = [s for s in cell.detail["samples"] if s["index"] in kept]
        detail = {"samples": samples, "sequential": {"samples_spent": spent, "threshold": 0.5}}
        value = 100 * float(np.mean([s["correct"] for s in samples]))
        cells.append(cell.model_copy(update={"detail": detail, "n": spent, "value": value}))
    return run.model_copy(update={"cells": cells, "config": {"task": "passkey", "params": AUTO}})


def _hits(seed: int, p: float) -> np.ndarray:
    return np.random.default_rng(seed).random((3, SAMPLES)) < p


def test_runs_that_stopped_at_different_counts_pair_on_the_common_samples():
    base_hits, cand_hits = _hits(1, 0.9), _hits(2, 0.5)
    base, cand = stopped(passkey_run(base_hits), 40), stopped(passkey_run(cand_hits), 20)
    result = run_gate([(base, cand)], GateOptions(n_boot=200))
    for verdict, b_row, c_row in zip(result.cells, base_hits, cand_hits, strict=True):
        common = sorted(visiting_order("passkey", 0, verdict.pair.base.length, SAMPLES)[:20])
        assert verdict.units == 20
        expected = mcnemar_drop(b_row[common], c_row[common])
        assert verdict.result.effect == pytest.approx(100 * expected.effect)  # points
        assert verdict.result.p_value == pytest.approx(expected.p_value)
    assert result.failed  # a drop from 0.9 to 0.5 shows on 20 common samples


def test_common_samples_must_still_be_the_same_samples():
    hits = _hits(1, 0.9)
    base, cand = stopped(passkey_run(hits), 40), stopped(passkey_run(hits), 20)
    cand.cells[0].detail["samples"][0]["key"] += 1
    with pytest.raises(IncomparableRuns, match="passkey samples"):
        run_gate([(base, cand)], GateOptions(n_boot=200))


def test_fixed_runs_still_need_the_very_same_samples():
    hits = _hits(1, 0.9)
    base, cand = passkey_run(hits), passkey_run(hits)
    del cand.cells[0].detail["samples"][5]
    with pytest.raises(IncomparableRuns, match="passkey samples"):
        run_gate([(base, cand)], GateOptions(n_boot=200))


def test_a_sequential_run_and_a_fixed_run_are_different_protocols():
    hits = _hits(1, 0.9)
    with pytest.raises(IncomparableRuns, match="protocols differ"):
        run_gate([(passkey_run(hits), stopped(passkey_run(hits), 20))], GateOptions(n_boot=200))
