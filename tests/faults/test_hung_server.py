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


class _Trickle:
    """A server that answers a byte every 0.1 s: in its headers (``where="headers"``) or its body. Each
    socket read is quick, so only a bound on the whole request stops it."""

    def __init__(self, where: str) -> None:
        import socket
        import threading

        self.where, self.stop = where, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.listener.close()

    def _serve(self) -> None:
        import contextlib
        import time

        body = b'{"object": "list", "data": [{"id": "tiny", "object": "model"}]}' * 2  # 13 s of trickle
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        while not self.stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = self.listener.accept()
                conn.recv(65536)
                quick, slow = (b"", head + body) if self.where == "headers" else (head, body)
                conn.sendall(quick)
                for byte in slow:
                    if self.stop.is_set():
                        break
                    conn.sendall(bytes([byte]))
                    time.sleep(0.1)
                conn.close()


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_server_that_trickles_is_cut_off_at_the_request_timeout(where):
    import time

    from coca_eval.backends.openai_client import CompletionsClient
    from coca_eval.errors import CocaEvalError

    waits = []
    with _Trickle(where) as url:
        client = CompletionsClient(url, timeout=0.6, retries=1, sleep=waits.append)
        started = time.monotonic()
        with pytest.raises(CocaEvalError, match=r"sent no answer on /models within --request-timeout 0.6 s"):
            client._call("/models", timeout=0.6)
        spent = time.monotonic() - started
    assert spent < 3.0 and waits == [1.0]  # two attempts of 0.6 s each, not minutes of trickle
