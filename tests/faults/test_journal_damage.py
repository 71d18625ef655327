"""Item 2: a damaged journal loses only the damaged line, never the rest; a part is reused only for
its own document."""

from __future__ import annotations

import json

import pytest
from fault_cli import cells_of, journal_entries, run_cli, tiny_ppl_args

from coca_eval.journal import Journal


def _part(part: str, doc_id: str) -> str:
    data = {"doc_id": doc_id, "nll_sum": 1.0, "tokens": 2}
    return json.dumps({"v": 1, "kind": "part", "key": "k", "part": part, "data": data})


def test_unterminated_last_line_is_kept_and_ended_before_the_next_append(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(_part("0", "a"))  # whole JSON, no newline (an editor, a copy, a cut at the byte)
    with Journal(path) as journal:
        assert journal.parts["k"]["0"]["doc_id"] == "a"
        journal.record_part("k", "1", {"doc_id": "b", "nll_sum": 2.0, "tokens": 2})
    with Journal(path) as again:
        assert sorted(again.parts["k"]) == ["0", "1"] and again.warnings == []
    assert path.read_text().count("\n") == 2


def test_bad_line_in_the_middle_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(_part("0", "a") + "\nnot json at all\n" + _part("1", "b") + "\n")
    with Journal(path) as journal:
        assert sorted(journal.parts["k"]) == ["0", "1"]
        assert len(journal.warnings) == 1 and "skipped unreadable line 2" in journal.warnings[0]


@pytest.mark.slow  # a long check (over 20 s on 2 cores): runs in CI's slow suite
def test_resume_over_damaged_journal_with_swapped_parts_gives_the_same_cells(
    tiny_llama_dir, corpus_file, tmp_path
):
    out = tmp_path / "out.json"
    args = tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--lengths", "32")
    assert run_cli(*args).returncode == 0
    reference = cells_of(out)
    journal = out.with_suffix(".journal.jsonl")
    parts = [e for e in journal_entries(journal) if e["kind"] == "part"]
    assert [p["part"] for p in parts] == ["0", "1"]
    parts[0]["data"], parts[1]["data"] = parts[1]["data"], parts[0]["data"]  # index 0 holds doc 1
    lines = [json.dumps(parts[0]), "{garbage", json.dumps(parts[1])]
    journal.write_text("\n".join(lines))  # no cell line, a bad middle line, no final newline
    out.unlink()

    result = run_cli(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "skipped unreadable line 2" in result.stderr
    assert cells_of(out) == reference  # the swapped parts were redone for their own documents
    assert "{garbage" in journal.read_text()  # nothing of the user's removed
