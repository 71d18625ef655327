"""Item 1: one run per journal. Two runs on one output used to truncate each other's appends."""

from __future__ import annotations

import os

import pytest
from fault_cli import assert_one_line_error, run_cli, tiny_ppl_args

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal


def test_second_journal_in_use_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    held = rf"in use by another coca-eval run \(pid {os.getpid()} "
    with Journal(path), pytest.raises(CocaEvalError, match=held):
        Journal(path)
    Journal(path).close()  # released on close: the next run gets it


def test_lock_is_released_when_loading_fails(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    path.mkdir()  # unreadable: loading fails after the lock was taken
    with pytest.raises(CocaEvalError, match="cannot read journal"):
        Journal(path)
    path.rmdir()
    Journal(path).close()  # not "in use": the failed load let go of the lock


def test_run_on_a_journal_in_use_exits_2_and_touches_nothing(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "out" / "out.json"
    journal = out.with_suffix(".journal.jsonl")
    journal.parent.mkdir()
    journal.write_text("")
    with Journal(journal):  # another run (this process) holds it
        second = run_cli(*tiny_ppl_args(tiny_llama_dir, corpus_file, out))
    assert_one_line_error(second, 2, "in use by another coca-eval run", f"pid {os.getpid()}")
    assert journal.read_text() == "" and not out.exists()
    assert {p.name for p in out.parent.iterdir()} == {journal.name, journal.name + ".lock"}
