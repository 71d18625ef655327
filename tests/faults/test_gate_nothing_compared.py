"""Item 3: a gate that compared nothing, or could not test, must not pass by default."""

from __future__ import annotations

import numpy as np
import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke, write
from test_gate_simulation import ppl_run

from coca_eval.results import Cell, Run

PARAMS = {"dataset": "pg19", "num_docs": 1, "doc_tokens": 4096, "stride": 512, "seed": 0}


def _bare_ppl(value: float) -> Run:
    """A ppl run whose cell has no per-document detail (a hand-made or foreign results file)."""
    cell = Cell(task="ppl", method="m", metric="ppl", length=512, dataset="pg19", value=value)
    return Run(config={"task": "ppl", "params": PARAMS}, cells=[cell])


@pytest.fixture
def gate(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "200")

    def run(base: Run, cand: Run):
        paths = write(tmp_path, "base", base), write(tmp_path, "cand", cand)
        result = invoke(capsys, "gate", "--baseline", paths[0], "--candidate", paths[1], "--bootstrap", "200")
        assert "Traceback" not in result.stderr
        return result

    return run


def test_a_hundredfold_rise_without_detail_fails(gate):
    result = gate(_bare_ppl(10.0), _bare_ppl(1000.0))
    assert (
        result.returncode == 1 and "no paired test" in result.stdout and "beyond tolerance" in result.stdout
    )


def test_same_values_without_detail_pass_saying_no_test_was_made(gate):
    result = gate(_bare_ppl(10.0), _bare_ppl(10.1))
    assert result.returncode == 0 and "no paired test" in result.stdout


def test_two_empty_runs_exit_2(gate):
    empty = Run(config={"task": "ppl", "params": PARAMS}, cells=[])
    assert_one_line_error(gate(empty, empty), 2, "compared no cell")


def test_one_document_falls_back_to_values(gate):
    tokens = np.full(1, 2000)
    base, cand = ppl_run(np.full((1, 1), 2.0), tokens), ppl_run(np.full((1, 1), 3.0), tokens)
    for run in (base, cand):
        run.config["params"] = PARAMS
    result = gate(base, cand)  # PPL e^2 -> e^3: +172 %, yet a one-document bootstrap cannot reject
    assert result.returncode == 1 and "one document" in result.stdout
