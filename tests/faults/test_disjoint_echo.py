"""Item 14: disjoint windows (S >= L, the default preset's S = L = 512) through the openai backend.

Such a window ends one token before its last target, which echoed prompt log-probs cannot score; the
backend sends the window with its last target appended. Each document's NLL sum and token count must
be the hf backend's on the same tiny model (the fake server computes log-probs with that model).
"""

from __future__ import annotations

import json

import pytest
from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer

DISJOINT = ["--lengths", "32,48", "--stride", "48", "--doc-tokens", "128", "--num-docs", "2"]  # S = L


def _docs(path) -> dict:
    """{(length, doc_id): (nll_sum, tokens)} of a ppl results file."""
    cells = json.loads(path.read_text())["cells"]
    return {
        (c["length"], d["doc_id"]): (d["nll_sum"], d["tokens"]) for c in cells for d in c["detail"]["docs"]
    }


@pytest.mark.parametrize("bos", ["auto", "first", "never"])
def test_disjoint_windows_score_as_on_hf(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, bos
):
    args = ["ppl", "--model", tiny_llama_bos_dir, "--dataset", corpus_file, *DISJOINT, "--bos", bos]
    hf = invoke(capsys, *args, "--output", tmp_path / "hf.json")
    assert hf.returncode == 0, hf.stderr[-2000:]
    with FakeServer(served_model, "tiny") as url:
        served = invoke(
            capsys, *args, "--backend", "openai", "--base-url", url, "--output", tmp_path / "oa.json"
        )
    assert served.returncode == 0, served.stderr[-2000:]
    reference, echoed = _docs(tmp_path / "hf.json"), _docs(tmp_path / "oa.json")
    assert reference.keys() == echoed.keys() and len(reference) == 4
    for key, (nll, tokens) in reference.items():
        assert echoed[key][1] == tokens == (128 if bos != "never" else 127), key
        assert echoed[key][0] == pytest.approx(nll, rel=1e-6), key
