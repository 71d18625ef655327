"""`coca-eval report --intervals` on a LongPPL run of a tiny model: the defined cell gets its document
bootstrap interval, the cell without key tokens reads as undefined, with no number and no interval."""

from __future__ import annotations

import re

import pytest
from test_gate_cli import invoke

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.ppl.longppl.params import make_longppl_params
from coca_eval.ppl.longppl.report import interval
from coca_eval.results import load_run


@pytest.fixture(scope="module")
def longppl_file(tiny_llama_dir, corpus_file, tmp_path_factory):
    """At L = 16, within the 24-token short context, no token is key; at L = 96 some are."""
    values = {"dataset": str(corpus_file), "num_docs": 4, "doc_tokens": 128, "lengths": "16,96",
              "short": 24, "step": 10, "bound": 6.0, "margin": 0.02}  # fmt: skip
    out = tmp_path_factory.mktemp("longppl") / "longppl.json"
    method = make_method(str(tiny_llama_dir), "none", "tiny", "float32", "hf")
    evaluate("longppl", [method], make_longppl_params(values), out, Runtime())
    return out


def test_intervals_for_longppl_cells(longppl_file, tmp_path, capsys):
    out = tmp_path / "report"
    result = invoke(capsys, "report", longppl_file, "--out", out, "--intervals", "--show-n", "--no-plots")
    assert result.returncode == 0, result.stderr
    undefined, defined = load_run(longppl_file).cells
    low, high = interval(defined)
    markdown = (out / "report.md").read_text()
    (row,) = [line for line in markdown.splitlines() if line.startswith("| tiny")]
    at_16, at_96 = [entry.strip() for entry in row.strip("|").split("|")[1:]]
    assert at_96 == f"{defined.value:.2f} [{low:.2f}, {high:.2f}] (n=4)"
    assert low < defined.value < high
    assert undefined.status == "error" and at_16 == "error" and not re.search(r"\d", at_16)
    assert "No key token, so LongPPL undefined (error): tiny @ 16." in markdown
    assert "Brackets (LongPPL): 95 % bootstrap interval, resampling documents" in markdown
    assert "n: documents for LongPPL." in markdown
