"""A run killed between journaling its last part and its cell line (the kill-and-resume soak found it):
the rerun has every part and no cell. passkey then asked the backend to decode no prompts at all, which
raised, so every rerun ended in a traceback and the output could never be finished."""

from __future__ import annotations

import json

import pytest
from fault_cli import cells_of, journal_entries, run_cli, tiny_ppl_args


def _passkey_args(model, out):
    return ["passkey", "--model", model, "--lengths", "200", "--samples", "3", "--max-new-tokens", "4",
            "--output", out]  # fmt: skip


@pytest.mark.parametrize("task", ["passkey", "ppl"])
def test_every_part_journaled_but_no_cell_resumes_to_the_same_cells(
    task, tiny_llama_dir, corpus_file, tmp_path
):
    out = tmp_path / "out.json"
    if task == "ppl":
        args = tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--lengths", "32")
    else:
        args = _passkey_args(tiny_llama_dir, out)
    assert run_cli(*args).returncode == 0
    reference = cells_of(out)
    journal = out.with_suffix(".journal.jsonl")
    parts = [e for e in journal_entries(journal) if e["kind"] == "part"]
    journal.write_text("".join(json.dumps(e) + "\n" for e in parts))  # killed before the cell line
    out.unlink()

    result = run_cli(*args)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    got = cells_of(out)
    for cell in got + reference:  # how this run decoded (it decoded nothing), not a number
        cell["detail"].pop("prefix_reuse", None)
    assert got == reference
