"""Item 9: a server that stops answering is named while it is waited for, and a request it never
answers fails after ``--request-timeout`` (then the usual retries), not after ten minutes each."""

from __future__ import annotations

import pytest
from fault_cli import assert_error_after_progress, assert_one_line_error
from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer

QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "64", "--num-docs", "1"]


def _ppl(capsys, model_dir, corpus_file, url, output, *extra):
    args = ["ppl", "--model", model_dir, "--dataset", corpus_file, *QUICK, "--output", output]
    return invoke(capsys, *args, "--backend", "openai", "--base-url", url, *extra)


def test_a_hung_server_fails_after_the_request_timeout(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, sleeps
):
    with FakeServer(served_model, "tiny", delay=3.0) as url:
        result = _ppl(
            capsys, tiny_llama_bos_dir, corpus_file, url, tmp_path / "run.json", "--request-timeout", "0.5"
        )
    assert_error_after_progress(result, 2, url, "sent no answer", "--request-timeout 0.5 s", "4 attempts")
    assert sleeps == [1.0, 2.0, 4.0]


def test_a_slow_server_is_named_while_it_is_waited_for(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, monkeypatch
):
    monkeypatch.setattr("coca_eval.backends.server_pool.HEARTBEAT_S", 0.2)
    with FakeServer(served_model, "tiny", delay=1.0) as url:
        result = _ppl(
            capsys, tiny_llama_bos_dir, corpus_file, url, tmp_path / "run.json", "--request-timeout", "30"
        )
    assert result.returncode == 0, result.stderr[-2000:]
    waiting = [
        line for line in result.stderr.splitlines() if line.startswith("coca-eval: waiting for server")
    ]
    assert waiting and all(url in line and "unanswered for" in line for line in waiting), result.stderr


def test_the_default_request_timeout_is_two_minutes():
    from coca_eval.backends.openai_client import client_for
    from coca_eval.backends.options import EngineOptions

    assert (
        client_for(EngineOptions(base_urls=("http://127.0.0.1:1/v1",)), "http://127.0.0.1:1/v1").timeout
        == 120
    )


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--request-timeout", "0", "--request-timeout must be a positive number"),
        ("--request-timeout", "-5", "--request-timeout must be a positive number"),
        ("--request-timeout", "inf", "--request-timeout must be a positive number"),
        ("--request-timeout", "nan", "--request-timeout must be a positive number"),
        ("--max-concurrent", "100000", "use at most 256"),
    ],
)
def test_bad_server_limits_are_one_line(
    tmp_path, capsys, tiny_llama_bos_dir, corpus_file, flag, value, fragment
):
    result = _ppl(
        capsys, tiny_llama_bos_dir, corpus_file, "http://127.0.0.1:9/v1", tmp_path / "r.json", flag, value
    )
    assert_one_line_error(result, 2, fragment)
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.journal.jsonl").exists()
