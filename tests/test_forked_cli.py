"""The CLI tests' forked runs (tests/forked_cli.py) answer as fresh processes do, or are not forked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

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


@pytest.fixture(scope="module")
def shell_zygote(tmp_path_factory):
    """A socket zygote and a ``coca-eval`` on PATH that asks it (as the documentation's examples run)."""
    from forked_cli import ROOT, SocketZygote

    folder = tmp_path_factory.mktemp("shell-zygote")
    shim = folder / "coca-eval"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "tests" / "zygote_client.py"}" '
                    f'"{folder / "zygote.sock"}" "$@"\n')  # fmt: skip
    shim.chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(folder), os.environ["PATH"]])}
    started = SocketZygote(folder, env)
    yield env, started
    started.close()


@pytest.mark.parametrize(
    "command",
    ["coca-eval tasks | head -3", "coca-eval ppl --lengths abc", "echo | coca-eval tasks --help"],
    ids=["piped", "bad-lengths", "stdin"],
)
def test_a_shell_command_forked_prints_and_exits_as_a_fresh_process(shell_zygote, command, tmp_path):
    """Through the client, a command's stdout, stderr (a pipe, as the shell gives them) and exit code
    are a fresh process's."""
    shell_zygote, zygote = shell_zygote
    before = len(zygote.served())
    forked = subprocess.run(
        ["bash", "-c", command], env=shell_zygote, cwd=tmp_path, capture_output=True, text=True
    )
    plain_env = {**shell_zygote, "PATH": os.environ["PATH"]}
    shimmed = command.replace("coca-eval", f"{sys.executable} -m coca_eval")
    plain = subprocess.run(
        ["bash", "-c", shimmed], env=plain_env, cwd=tmp_path, capture_output=True, text=True
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert forked.stdout or forked.stderr
    assert len(zygote.served()) == before + 1  # the zygote forked it


def test_a_shell_command_with_an_import_time_variable_runs_plain():
    from zygote_client import SET_BY_THE_SHELL, served

    zygote_env = {"PATH": "/bin", "HF_HUB_OFFLINE": "1"}
    shell = {**zygote_env, "COCA_EVAL_SEED": "1", "SHLVL": "2", "_": "/bin/coca-eval"}
    assert served(zygote_env, shell, SET_BY_THE_SHELL)
    assert not served(zygote_env, {**zygote_env, "OMP_NUM_THREADS": "1"}, SET_BY_THE_SHELL)
    assert not served(zygote_env, {"PATH": "/bin"}, SET_BY_THE_SHELL)
