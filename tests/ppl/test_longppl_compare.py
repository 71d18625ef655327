"""LongPPL beside perplexity: the rows read the runs' own numbers, the interval resamples documents,
the evaluator's own row is marked, and a file without a longppl cell is one line, exit 2."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from coca_eval.intervals import ppl_interval
from coca_eval.ppl.longppl.compare import compare_rows, markdown
from coca_eval.results import Cell, Run, save_run

ROOT = Path(__file__).resolve().parents[2]
DOCS = [("a#1", 3, 1.5, 400, 1200.0), ("a#2", 5, 4.0, 400, 1300.0), ("b#1", 2, 0.5, 400, 1100.0)]


def _longppl_cell(method: str, scale: float) -> Cell:
    """Three documents: (doc_id, key tokens, key NLL sum, tokens, NLL sum), the sums times ``scale``."""
    docs = [
        dict(doc_id=d, text_sha="0" * 16, spans=[[0, 4]], key_tokens=k, key_nll_sum=kn * scale, tokens=t,
             nll_sum=n * scale)
        for d, k, kn, t, n in DOCS
    ]  # fmt: skip
    keys, key_nll = sum(d["key_tokens"] for d in docs), sum(d["key_nll_sum"] for d in docs)
    ppl = math.exp(sum(d["nll_sum"] for d in docs) / sum(d["tokens"] for d in docs))
    detail = {"docs": docs, "ppl": ppl, "tokens": 1200}
    return Cell(task="longppl", method=method, metric="longppl", length=1024, dataset="d", n=keys,
                value=math.exp(key_nll / keys), detail=detail)  # fmt: skip


def _longppl_run(path: Path) -> Path:
    params = {"dataset": "d", "evaluator_model": "m-a", "short": 64, "step": 16, "bound": 2.0, "margin": 2.0}
    methods = [
        {"label": "A", "model": "m-a", "rope": "none"},
        {"label": "A + NTK", "model": "m-a", "rope": "dynamic:4"},
    ]
    cells = [_longppl_cell("A", 1.0), _longppl_cell("A + NTK", 1.5)]
    save_run(Run(config={"task": "longppl", "params": params, "methods": methods}, cells=cells), path)
    return path


def _ppl_run(path: Path) -> Path:
    cells = [
        Cell(task="ppl", method="A", metric="ppl", length=1024, value=20.0, n=1200,
             detail={"docs": [{"doc_id": "a#1", "nll_sum": 3000.0, "tokens": 1000}]}),
        Cell(task="ppl", method="A", metric="ppl", length=512, value=99.0, n=1200,
             detail={"docs": [{"doc_id": "a#1", "nll_sum": 3000.0, "tokens": 1000}]}),
    ]  # fmt: skip
    save_run(Run(config={"task": "ppl", "params": {"mode": "sliding", "stride": 512}}, cells=cells), path)
    return path


def test_rows_hold_the_runs_numbers_and_a_document_bootstrap(tmp_path):
    from coca_eval.results import load_run

    longppl, ppl = load_run(_longppl_run(tmp_path / "l.json")), load_run(_ppl_run(tmp_path / "p.json"))
    first, second = compare_rows(longppl, [ppl])
    assert (first.method, first.is_evaluator, second.is_evaluator) == ("A", True, False)
    assert first.longppl == pytest.approx(math.exp(6.0 / 10)) and first.other_ppl == [20.0]
    assert second.other_ppl == [None]  # no such method in the ppl run
    assert (first.keys.total, first.keys.least, first.keys.most, first.keys.scored) == (10, 2, 5, 1200)
    assert first.interval == ppl_interval([1.5, 4.0, 0.5], [3, 5, 2])
    assert first.interval[0] < first.longppl < first.interval[1]


def test_the_page_names_the_key_tokens_and_the_evaluators_bias(tmp_path):
    text = markdown(_longppl_run(tmp_path / "l.json"), [_ppl_run(tmp_path / "p.json")], "bash make.sh")
    assert "key tokens judged by `m-a` (short context 64, step 16" in text
    assert (
        "Key tokens: 10 of 1200 (0.83%), 2 to 5 per document; every row is scored on the same ones." in text
    )
    assert "| A (evaluator) | 20.00 |" in text and "| A + NTK | – |" in text
    assert "below exp(2) = 7.39 by construction" in text
    assert "## L = 1k, 3 documents" in text
    assert text.endswith("Regenerate with `bash make.sh`.\n")


def test_a_file_without_a_longppl_cell_is_one_line_exit_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "coca_eval.ppl.longppl.compare", str(_ppl_run(tmp_path / "p.json"))],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "holds no finished longppl cell" in done.stderr
