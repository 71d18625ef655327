"""The passkey half of the CI gate can fail: its committed baseline retrieves, and a candidate that lost
retrieval is failed against it.

A baseline whose accuracy is 0 at every length passes any candidate (nothing can drop), so the gate in
``tests/test_gate_baseline.py`` would have caught no regression at all. Here the baseline must retrieve
nearly every key, and ``zoo-rope`` with its attention output zeroed in every layer (what a broken
conversion or merge can leave: the weights load, the model still writes digits, but nothing reads the
context) is run with the same protocol and must exit 1 with a failed cell.
"""

from __future__ import annotations

import shutil

from test_gate_baseline import BASELINE, gate_verdict, produce_passkey

from coca_eval.taskspec import load_checked_run


def test_the_committed_passkey_baseline_retrieves():
    cells = load_checked_run(BASELINE / "passkey_zoo.json").cells  # a 0-1 file, read in points
    assert cells and all(cell.value >= 90 for cell in cells), [(c.length, c.value) for c in cells]


def attention_removed_copy(directory):
    """A copy of the shipped ``zoo-rope`` whose attention output projections are all zero."""
    from safetensors.torch import load_file, save_file

    from coca_eval.models.presets import resolve_model

    shutil.copytree(resolve_model("zoo-rope")[0], directory)
    weights = load_file(directory / "model.safetensors")
    damaged = [name for name in weights if name.endswith("self_attn.o_proj.weight")]
    assert damaged  # the damage must touch something, or this test gates an intact model
    for name in damaged:
        weights[name].zero_()
    save_file(weights, directory / "model.safetensors", metadata={"format": "pt"})
    return directory


def test_a_candidate_that_lost_retrieval_fails_the_gate(tmp_path, capsys, monkeypatch):
    candidate = produce_passkey(tmp_path / "cand.json", attention_removed_copy(tmp_path / "no-attention"))
    code, verdict = gate_verdict(capsys, monkeypatch, BASELINE / "passkey_zoo.json", candidate)
    assert code == 1, verdict
    cells = [(c["task"], c["length"], c["verdict"], c["reason"]) for c in verdict["cells"]]
    assert cells == [("passkey", 512, "regression", "beyond tolerance and significant")], cells
    assert verdict["cells"][0]["effect"] >= 0.9  # nearly every key lost
