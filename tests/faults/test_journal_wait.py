"""Item 1, second half: ``--wait``. Two real runs on one ``--output``: without it the second stops with
one line naming the first; with it the second waits, and both end with every cell and no lost part."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import threading
import time

import pytest
from fault_cli import CLI, assert_one_line_error, cells_of, journal_entries, run_cli, tiny_ppl_args

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal

TIMEOUT = 240


def test_waiting_journal_blocks_until_the_holder_closes_then_names_itself(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    notices: list[str] = []
    holder = Journal(path)
    holder.record_part("k", "0", {"doc_id": "a"})
    waiter: list[Journal] = []
    thread = threading.Thread(target=lambda: waiter.append(Journal(path, True, notices.append)))
    thread.start()
    deadline = time.monotonic() + 30
    while not notices and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(notices) == 1 and f"pid {os.getpid()} " in notices[0] and "waiting" in notices[0]
    assert thread.is_alive()  # blocked on the lock, not refused
    holder.close()
    thread.join(30)
    assert waiter and waiter[0].parts == {"k": {"0": {"doc_id": "a"}}}  # loaded after the holder
    assert waiter[0].lock_path.read_bytes().startswith(f"pid {os.getpid()} ".encode())  # no NUL gap
    waiter[0].close()


def test_a_holder_that_names_itself_a_moment_late_is_still_named(tmp_path):
    lock_path = tmp_path / "run.journal.jsonl.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held, its line not yet written: the window a racing run can meet
    late = threading.Timer(0.3, lambda: os.pwrite(fd, b"pid 4242 on host since now\n", 0))
    late.start()
    try:
        with pytest.raises(CocaEvalError, match=r"\(pid 4242 on host since now\)"):
            Journal(tmp_path / "run.journal.jsonl")
    finally:
        late.join()
        os.close(fd)


def test_a_released_lock_names_no_ended_run(tmp_path):
    journal = Journal(tmp_path / "run.journal.jsonl")
    assert journal.lock_path.read_text().startswith(f"pid {os.getpid()} ")
    journal.close()
    assert journal.lock_path.read_text() == ""


def test_refusal_without_wait_advises_wait(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    with Journal(path), pytest.raises(CocaEvalError, match="--wait"):
        Journal(path)


@pytest.fixture(scope="module")
def reference(tiny_llama_dir, corpus_file, tmp_path_factory):
    """The cells of one uninterrupted run, alone on its output."""
    out = tmp_path_factory.mktemp("reference") / "out.json"
    result = run_cli(*tiny_ppl_args(tiny_llama_dir, corpus_file, out))
    assert result.returncode == 0, result.stderr[-2000:]
    return cells_of(out), len(journal_entries(out.with_suffix(".journal.jsonl")))


def _start_two(args, folder):
    """Both runs at once, each one's stderr in a file that can be read while it runs."""
    procs = []
    for name in ("a", "b"):
        with open(folder / f"{name}.err", "w") as err:
            procs.append(subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.DEVNULL, stderr=err))
    return procs


def _holder(procs, lock_path):
    """The run that took the journal's lock first, as soon as its lock file names it."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        text = lock_path.read_text() if lock_path.exists() else ""
        for proc in procs:
            if text.startswith(f"pid {proc.pid} "):
                return proc
        time.sleep(0.005)
    raise AssertionError("no run took the journal lock")


def _wait_for_text(proc, path, text):
    """Until the running ``proc`` has written ``text`` to its stderr file."""
    deadline = time.monotonic() + TIMEOUT
    while text not in path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, path.read_text()[-2000:]
        time.sleep(0.02)


def _finish(proc, err_path):
    proc.wait(TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err_path.read_text())


def _race(args, tmp_path, while_paused):
    """Start both runs, pause whichever holds the lock while ``while_paused(holder, other)`` runs (so
    the other surely meets a held lock), then let the holder go on; both runs' results."""
    lock = args[args.index("--output") + 1].with_suffix(".journal.jsonl.lock")
    procs = _start_two(args, tmp_path)
    try:
        holder = _holder(procs, lock)
        os.kill(holder.pid, signal.SIGSTOP)
        other = procs[1] if holder is procs[0] else procs[0]
        errs = {p.pid: tmp_path / ("a.err" if p is procs[0] else "b.err") for p in procs}
        while_paused(other, errs[other.pid])
        os.kill(holder.pid, signal.SIGCONT)
        return holder, _finish(holder, errs[holder.pid]), _finish(other, errs[other.pid])
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
                proc.wait()


def test_two_runs_without_wait_one_refused_naming_the_other(tiny_llama_dir, corpus_file, tmp_path, reference):
    out = tmp_path / "out.json"
    args = tiny_ppl_args(tiny_llama_dir, corpus_file, out)
    holder, first, second = _race(args, tmp_path, lambda other, err: other.wait(TIMEOUT))
    assert first.returncode == 0, first.stderr[-2000:]
    assert_one_line_error(second, 2, "in use by another coca-eval run", f"(pid {holder.pid} ")
    assert cells_of(out) == reference[0]


def test_two_runs_with_wait_both_finish_with_every_cell_and_part(
    tiny_llama_dir, corpus_file, tmp_path, reference
):
    out = tmp_path / "out.json"
    args = tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--wait")
    holder, first, second = _race(args, tmp_path, lambda other, err: _wait_for_text(other, err, "waiting"))
    for result in (first, second):
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"(pid {holder.pid} " in second.stderr
    assert cells_of(out) == reference[0]
    entries = journal_entries(out.with_suffix(".journal.jsonl"))
    assert len(entries) == reference[1]  # the waiter reused every part and cell: nothing lost or redone
    parts = {(e["key"], e["part"]) for e in entries if e["kind"] == "part"}
    assert len(parts) == len([e for e in entries if e["kind"] == "part"]) == 2 * 2  # lengths x docs
