"""Item 6: results and reports get the umask's mode, and a write that fails is one line, exit 2."""

from __future__ import annotations

import errno
import os
import stat

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic
from coca_eval.journal import Journal
from coca_eval.results import Cell, Run, save_run


@pytest.fixture
def umask():
    def set_mask(mask: int) -> None:
        os.umask(mask)

    old = os.umask(0o022)
    yield set_mask
    os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_results_file_mode_follows_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    save_run(Run(), tmp_path / "run.json")
    assert stat.S_IMODE((tmp_path / "run.json").stat().st_mode) == mode


def test_disk_full_on_rename_is_one_error_and_leaves_no_temp_file(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(CocaEvalError, match="cannot write .*No space left on device"):
        write_atomic(tmp_path / "run.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_folder_should_be_is_one_error(tmp_path):
    (tmp_path / "taken").write_text("")
    with pytest.raises(CocaEvalError, match="cannot write"):
        write_atomic(tmp_path / "taken" / "run.json", "{}")


def test_journal_append_failure_is_one_error_and_keeps_what_was_journaled(tmp_path, monkeypatch):
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        journal.record_part("k", "0", {"doc_id": "a"})
        real_open = open

        def no_space(file, mode="r", *args, **kwargs):
            if str(file) == str(path) and "a" in mode:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_open(file, mode, *args, **kwargs)

        monkeypatch.setattr("builtins.open", no_space)
        with pytest.raises(CocaEvalError, match="cannot write journal"):
            journal.record_part("k", "1", {"doc_id": "b"})
    monkeypatch.undo()
    with Journal(path) as again:
        assert list(again.parts["k"]) == ["0"]


def test_report_into_a_file_is_one_line_exit_2(tmp_path, capsys, umask):
    run = tmp_path / "run.json"
    cell = Cell(task="ppl", method="m", metric="ppl", length=512, dataset="pg19", value=5.0)
    save_run(Run(config={"task": "ppl"}, cells=[cell]), run)
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    result = invoke(capsys, "report", run, "--out", blocked / "sub", "--no-plots")
    assert_one_line_error(result, 2, "cannot write")
    umask(0o022)
    result = invoke(capsys, "report", run, "--out", tmp_path / "rep", "--no-plots")
    assert result.returncode == 0
    assert stat.S_IMODE((tmp_path / "rep" / "report.md").stat().st_mode) == 0o644
