"""The CLI tests' forked runs (tests/forked_cli.py) answer as fresh processes do, or are not forked."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from faults.fault_cli import CLI, cells_of, tiny_ppl_args
from forked_cli import HEAVY_MODULES, Zygote


@pytest.fixture(scope="module")
def zygote():
    started = Zygote(HEAVY_MODULES)
    yield started
    started.close()


def _plain(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.parametrize(
    "args",
    [
        ["tasks"],
        ["ppl", "--lengths", "abc"],  # bad input: one line, exit 2
        ["passkey", "--model", "no/such-model-anywhere", "--lengths", "64", "--output", "out.json"],
    ],
    ids=["listing", "bad-lengths", "missing-model"],
)
def test_a_forked_run_prints_and_exits_as_a_fresh_process(zygote, args, tmp_path):
    forked = zygote.run(args, cwd=tmp_path)
    plain = _plain(*args, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_a_forked_run_scores_as_a_fresh_process(zygote, tiny_llama_dir, corpus_file, tmp_path):
    forked = zygote.run(tiny_ppl_args(tiny_llama_dir, corpus_file, tmp_path / "forked.json"), cwd=tmp_path)
    plain = _plain(*tiny_ppl_args(tiny_llama_dir, corpus_file, tmp_path / "plain.json"), cwd=tmp_path)
    assert forked.returncode == plain.returncode == 0, forked.stderr[-2000:]
    assert cells_of(tmp_path / "forked.json") == cells_of(tmp_path / "plain.json")
    journal = (tmp_path / "forked.journal.jsonl").read_text().splitlines()
    assert "part" in {json.loads(line)["kind"] for line in journal}


def test_a_variable_read_at_import_time_is_not_forked(zygote):
    assert zygote.serves({**zygote.env, "COCA_EVAL_JOURNAL_DIR": "/elsewhere", "COLUMNS": "200"})
    assert not zygote.serves({**zygote.env, "HF_HUB_CACHE": "/elsewhere"})  # the hub read it at import
    other_threads = "2" if zygote.env.get("OMP_NUM_THREADS") == "1" else "1"  # -n N workers set 1
    assert not zygote.serves({**zygote.env, "OMP_NUM_THREADS": other_threads})
    assert not zygote.serves({k: v for k, v in zygote.env.items() if k != "PATH"})


def test_a_killed_run_says_so_and_a_timeout_raises(zygote, tiny_llama_dir, corpus_file, tmp_path):
    args = tiny_ppl_args(tiny_llama_dir, corpus_file, tmp_path / "out.json")
    killed = zygote.run(args, cwd=tmp_path, kill_after=0.05)
    assert killed.returncode == -signal.SIGKILL
    with pytest.raises(subprocess.TimeoutExpired):
        zygote.run(args, cwd=tmp_path, timeout=0.05)
    assert zygote.run(["tasks"], cwd=tmp_path).returncode == 0  # still serving after both kills
