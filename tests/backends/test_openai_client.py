"""The completions client against a loopback server: credentials sent but never shown, bounded retries
with backoff on answers a retry can fix, and one-line errors for everything else."""

from __future__ import annotations

import base64
import time

import pytest
from fake_completions import FakeServer

from coca_eval.backends.openai_client import CompletionsClient, client_for
from coca_eval.backends.options import EngineOptions
from coca_eval.errors import CocaEvalError

KEY = "sk-test-0123456789"
DROP = (0, None)  # close the connection without an answer


def scripted(*answers):
    """A rewrite hook: the n-th request gets ``answers[n]`` (a ``(status, body)``, or a number of seconds
    to stall before the real answer); requests past the script get the real answer."""
    seen = []

    def rewrite(route, status, body):
        seen.append(route)
        answer = answers[len(seen) - 1] if len(seen) <= len(answers) else None
        if isinstance(answer, float):
            time.sleep(answer)
            return status, body
        return answer or (status, body)

    return rewrite


def _client(url: str, sleeps: list, **kwargs) -> CompletionsClient:
    return CompletionsClient(url, sleep=sleeps.append, **kwargs)


def _models_error(rewrite, sleeps: list, **kwargs) -> str:
    """The one-line error of ``/models`` on a server answering through ``rewrite``."""
    with FakeServer(None, "tiny", rewrite=rewrite) as url:
        try:
            _client(url, sleeps, **kwargs).served_models()
        except CocaEvalError as exc:
            return str(exc)
    raise AssertionError("no error")


def test_the_key_goes_out_as_a_bearer_token(monkeypatch):
    monkeypatch.setenv("MY_SERVER_KEY", KEY)
    with FakeServer(None, "tiny", api_key=KEY) as url:
        server_models = client_for(EngineOptions(api_key_env="MY_SERVER_KEY"), url).served_models()
    assert server_models == ["tiny"]


def test_a_refused_key_is_one_line_that_never_shows_it():
    message = _models_error(scripted((401, {"error": f"key {KEY} is not valid"})), [], api_key=KEY)
    assert "answered 401" in message and "$OPENAI_API_KEY is set" in message and "***" in message
    assert KEY not in message


def test_credentials_and_token_in_the_url_are_sent_not_shown():
    server = FakeServer(None, "tiny", rewrite=scripted((500, {"error": "token qtok-secret rejected"})))
    with server as url:
        secret_url = url.replace("http://", "http://alice:pw%2Fsecret@") + "?token=qtok-secret"
        client = _client(secret_url, [], retries=0)
        with pytest.raises(CocaEvalError) as caught:
            client.served_models()
        assert client.served_models() == ["tiny"]
    assert client.base_url == url
    assert "qtok-secret" not in str(caught.value) and "pw" not in str(caught.value)
    path, headers = server.requests[-1]
    assert path == "/v1/models?token=qtok-secret"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"alice:pw/secret").decode()


def test_5xx_and_429_are_retried_with_backoff():
    answers = scripted((503, {}), (429, {}), (500, {"error": "busy"}))
    sleeps: list[float] = []
    with FakeServer(None, "tiny", rewrite=answers) as url:
        assert _client(url, sleeps).served_models() == ["tiny"]
    assert sleeps == [1.0, 2.0, 4.0]


def test_a_server_that_stays_down_is_one_line_after_the_retries():
    sleeps: list[float] = []
    message = _models_error(lambda route, status, body: (502, {"error": "bad gateway"}), sleeps)
    assert "answered 502 on /models: " in message and message.endswith("(gave up after 4 attempts)")
    assert sleeps == [1.0, 2.0, 4.0]


def test_timeouts_and_dropped_connections_are_retried():
    sleeps: list[float] = []
    with FakeServer(None, "tiny", rewrite=scripted(DROP, 1.0)) as url:
        assert _client(url, sleeps, timeout=0.2).served_models() == ["tiny"]
    assert sleeps == [1.0, 2.0]


def test_what_a_retry_cannot_fix_is_not_retried():
    sleeps: list[float] = []
    assert "answered 400 on /models: " in _models_error(scripted((400, {"error": "bad request"})), sleeps)
    with pytest.raises(CocaEvalError, match="cannot reach --base-url http://127.0.0.1:9/v1"):
        _client("http://127.0.0.1:9/v1", sleeps).served_models()  # nothing listens: refused at once
    assert sleeps == []


def test_a_reply_that_is_not_json_says_so():
    message = _models_error(scripted((200, b"<html>proxy login</html>")), [])
    assert (
        "with text that is not JSON: '<html>proxy login</html>'" in message and "cannot reach" not in message
    )
