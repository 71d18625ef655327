"""Issue 38 item 8: one writer per ``--output``. Two shards given one ``--output`` both printed
"written" and the last writer won; a shard now takes the output's lock (the one a plain run on that
output holds as its journal lock) and a second writer is refused in one line naming the holder."""

from __future__ import annotations

import fcntl
import os

from fault_cli import assert_one_line_error, run_cli, tiny_ppl_args

from coca_eval.journal import Journal


def test_a_shard_on_an_output_another_run_writes_is_refused(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "run.json"
    with Journal(out.with_suffix(".journal.jsonl")):  # a plain run on that output (this process)
        shard = run_cli(*tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--shard", "2/2"))
    assert_one_line_error(shard, 2, f"output {out} is being written by another coca-eval run",
                          f"pid {os.getpid()}")  # fmt: skip
    assert not out.exists()


def test_a_second_shard_on_one_output_is_refused_while_the_first_writes(
    tiny_llama_dir, corpus_file, tmp_path
):
    out = tmp_path / "run.json"
    lock = out.with_suffix(".journal.jsonl.lock")
    first = os.open(lock, os.O_RDWR | os.O_CREAT)  # shard 1/2, still running, holds the output's lock
    fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        second = run_cli(*tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--shard", "2/2"))
    finally:
        os.close(first)
    assert_one_line_error(second, 2, "is being written by another coca-eval run")
    assert not out.exists()
    after = run_cli(*tiny_ppl_args(tiny_llama_dir, corpus_file, out, "--shard", "2/2"))
    assert after.returncode == 0, after.stderr[-2000:]  # released: the shard runs and writes
    assert out.exists()
