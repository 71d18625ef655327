"""RULER on an OpenAI-compatible server: the cells that share a length and an answer budget go to the
server together, in one request (the server batches what a request holds), and each answer is
journaled under its own cell, as on the hf backend."""

from __future__ import annotations

import json

from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer


def test_cells_of_one_budget_are_one_request(capsys, served_model, tiny_llama_bos_dir, tmp_path):
    out, alone = tmp_path / "r.json", tmp_path / "alone.json"
    args = ["--lengths", "1000", "--samples", "3", "--chat-template", "none", "--max-concurrent", "1"]
    server = FakeServer(served_model, "tiny")
    with server as url:
        run = ("ruler", "--model", str(tiny_llama_bos_dir), "--backend", "openai", "--base-url", url, *args)
        together = invoke(capsys, *run, "--tasks", "niah_single_1,niah_multikey_2,vt", "--output", str(out))
        requests = server.completions()
        single = invoke(capsys, *run, "--tasks", "niah_multikey_2", "--output", str(alone))
    assert together.returncode == 0 and single.returncode == 0, (
        together.stderr[-2000:] + single.stderr[-2000:]
    )
    # one request in flight at a time, so a request is a call: the two NIAH cells' six prompts in one
    # (budget 128), vt's three in another; cell by cell it would be three
    assert requests == 2
    cells = {c["dataset"]: c for c in json.loads(out.read_text())["cells"]}
    (own,) = json.loads(alone.read_text())["cells"]
    assert cells["niah_multikey_2"]["detail"]["samples"] == own["detail"]["samples"]  # its own answers
    assert all(c["status"] == "ok" and c["n"] == 3 for c in cells.values())
